"""Sender fallbacks: a group send whose key fetch fails is logged and still refused cleanly
while offline; a request being handed over is found from its stored copy."""

import logging

import pytest

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.errors import PacerelleConnectionError
from custom_components.pacerelle.client.relay.frames import group_recipient
from custom_components.pacerelle.client.values.requests import Request
from tests.helpers.client_agent import ONE_FILE, Recorder, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle


async def test_group_key_fetch_failure_is_logged_and_the_offline_send_refused(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    agent = make_agent(emulator, installed, recorder)  # never started: offline
    await emulator.faults(runtime_token_status=503)
    caplog.set_level(logging.WARNING)
    with pytest.raises(PacerelleConnectionError):
        await agent.send_text(
            "to the group",
            conversation_id=installed.conversation_id,
            to=group_recipient(installed.conversation_id),
        )
    assert "Could not fetch group keys before sending" in caplog.text
    assert agent.history().replies == ()
    assert recorder.documents == []


async def test_a_request_being_handed_over_is_found_from_its_stored_copy(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()

    def crash(_request: Request, _download: object) -> None:
        raise RuntimeError("Home Assistant stopped mid-way")

    recorder.prepare = crash  # type: ignore[method-assign]
    agent = make_agent(emulator, installed, recorder)
    agent.start()
    try:
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        message_id = await emulator.send(
            installed.conversation_id, text="only once", attachments=ONE_FILE
        )
        await wait_for(lambda: message_id in agent.data.inbox.received)
    finally:
        await agent.stop()
    assert message_id not in agent.data.inbox.pending
    found = agent.find_request(message_id)
    assert found is not None
    assert (found.message_id, found.text) == (message_id, "only once")
