"""A request evicted from `received` (MAX_RECEIVED) after a crash: no KeyError, no loop.

The flow is real (the emulator's relay, the agent's pipeline, a crash mid-hand-over, a new
process from the saved store); only MAX_RECEIVED is made small so that three messages
overflow it. Through today's pipeline the KeyError does not happen (its accept step keeps
only ids still received): the flow test guards that path, the unit test Inbox.accept
itself, which raised KeyError for an evicted id.
"""

import logging

import pytest

from custom_components.pacerelle.client import store_bounds
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.requests import Inbox, Request
from tests.helpers.client_agent import ONE_FILE, Recorder, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle


def _crash(_request: Request, _download: object) -> None:
    raise RuntimeError("Home Assistant stopped mid-way")


async def test_evicted_request_redelivered_after_a_crash(
    emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(store_bounds, "MAX_RECEIVED", 2)
    installed = await emulator.install()
    conversation = installed.conversation_id
    crashing = Recorder()
    crashing.prepare = _crash  # type: ignore[method-assign]
    first = make_agent(emulator, installed, crashing)
    first.start()
    try:
        await wait_for(lambda: first.status.state is ConnectionState.CONNECTED, within=5)
        sent = [
            await emulator.send(conversation, text=f"message {n}", attachments=ONE_FILE)
            for n in (1, 2, 3)
        ]
        # Decrypted and stored, never handed over; the oldest evicted past MAX_RECEIVED.
        await wait_for(
            lambda: bool(crashing.documents)
            and crashing.documents[-1]["evictions"]["received_requests"] == 1
            and len(crashing.documents[-1]["inbox"]["received"]) == 2,
            within=5,
        )
    finally:
        await first.stop()
    saved = AgentData.from_document(crashing.last_document)
    assert saved is not None
    kept = set(saved.inbox.received)
    assert kept == set(sent[1:])

    recorder = Recorder()
    second = make_agent(emulator, installed, recorder, data=saved)
    caplog.clear()  # the first process's crashes were logged
    with caplog.at_level(logging.WARNING):
        second.start()
        try:
            # The relay redelivers all three; the two stored ones are handed over, the
            # evicted one (its keys spent by the first decryption) is refused for good.
            await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=5)
            await wait_for(lambda: len(recorder.delivered) == 2, within=5)
        finally:
            await second.stop()
    assert [request.message_id for request in recorder.delivered] == sent[1:]
    assert "left for redelivery" not in caplog.text
    assert "KeyError" not in caplog.text


def test_accept_skips_an_id_evicted_meanwhile() -> None:
    """The pipeline's write of `received` may evict a request it then accepts."""
    inbox = Inbox()
    accepted = inbox.accept(["evicted"])
    assert accepted.pending == {}
    assert accepted.accepted == {}
