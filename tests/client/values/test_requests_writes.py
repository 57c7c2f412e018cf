"""A message is saved received before its event, and accepted after it, both before its ACK.

The agent runs against the emulator over TCP; its person's device encrypts with Signal.
The write before the event holds the decrypted copy (a kill then never decrypts it twice);
the event follows its mark (client/inbox/delivery.py); the write after it accepts, so a
kill before the event never leaves the message accepted without one.
"""

import asyncio
from dataclasses import replace
from typing import Any

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.inbox.delivery import with_files
from custom_components.pacerelle.client.relay.frames import InboundMessage
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.events import MessageEvents
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle, Installed


class WatchingHost(Recorder):
    """Records, at each save, what the relay still holds unacknowledged, and at each
    hand-over, whether the request was saved as received and not yet accepted."""

    def __init__(self, emulator: EmulatorHandle, installed: Installed) -> None:
        super().__init__()
        self.emulator = emulator
        self.installed = installed
        self.queued_at_save: list[list[str]] = []
        self.received_at_event: list[bool] = []
        self.failing_saves = 0

    async def save(self, document: dict[str, Any]) -> None:
        if self.failing_saves:
            self.failing_saves -= 1
            raise OSError("disk full")
        await super().save(document)
        status = await self.emulator.admin("GET", f"/agents/{self.installed.agent_id}")
        self.queued_at_save.append(list(status["queued"]))

    def deliver(self, request: Request) -> None:
        inbox = self.documents[-1]["inbox"]
        received = {item["request"]["message_id"] for item in inbox["received"]}
        self.received_at_event.append(
            request.message_id in received and request.message_id not in inbox["accepted"]
        )
        super().deliver(request)


async def test_a_text_is_saved_received_before_its_event_and_accepted_after(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    host = WatchingHost(emulator, installed)
    async with connected_agent(emulator, installed, host) as agent:
        await wait_for(lambda: not agent._inbox.queue and not agent._core.lock.locked())
        before = len(host.documents)
        message_id = await emulator.send(installed.conversation_id, text="lights on")
        await wait_for(lambda: len(host.delivered) == 1)
        await emulator.wait_agent(installed.agent_id, lambda status: status["queued"] == [])

        # Two writes, both while the relay still holds it: received (before the event),
        # then accepted, pending and in the history (after it).
        holding = [
            (document, queued)
            for document, queued in zip(
                host.documents[before:], host.queued_at_save[before:], strict=True
            )
            if message_id in document["inbox"]["accepted"]
            or any(
                item["request"]["message_id"] == message_id
                for item in document["inbox"]["received"]
            )
        ]
        (received, queued_first), (accepted, queued_then) = holding[:2]
        assert [item["request"]["text"] for item in received["inbox"]["received"]] == ["lights on"]
        assert message_id not in received["inbox"]["accepted"]
        assert accepted["inbox"]["received"] == []
        assert [item["message_id"] for item in accepted["inbox"]["pending"]] == [message_id]
        assert [item["request"]["text"] for item in accepted["history"]["requests"]] == [
            "lights on"
        ]
        assert queued_first == queued_then == [message_id]  # saved while not acknowledged
        assert host.received_at_event == [True]  # the event came between the two


async def test_a_failed_received_write_hands_nothing_over_and_acknowledges_nothing(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    host = WatchingHost(emulator, installed)
    async with connected_agent(emulator, installed, host) as agent:
        await wait_for(lambda: not agent._inbox.queue and not agent._core.lock.locked())
        data_before = agent.data
        host.failing_saves = 1
        message_id = await emulator.send(installed.conversation_id, text="only once")
        await wait_for(lambda: host.failing_saves == 0 and not agent._core.lock.locked())
        await asyncio.sleep(0.1)  # an event or ACK would come within one loop pass or two
        assert host.delivered == []
        assert agent.data is data_before  # the Signal state too: decrypted again later
        status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
        assert status["queued"] == [message_id]

        # The relay redelivers at the next connection: decrypted on the saved state, once.
        await emulator.faults(drop_connections=True)
        await wait_for(lambda: len(host.delivered) == 1)
        assert host.delivered[0].text == "only once"
        await emulator.wait_agent(installed.agent_id, lambda status: status["queued"] == [])
        assert host.received_at_event == [True]


FILE = {"id": "f-1", "name": "a.txt", "mime": "text/plain", "size": 1, "blob_id": "b-1"}


def _plain(message_id: str, text: str, *, files: bool = False) -> InboundMessage:
    attachments = (FILE,) if files else ()
    payload = text.encode()
    return InboundMessage(
        message_id, "c-1", "u-1", "1", "a-1", payload, False, None, attachments, f"d-{message_id}"
    )


async def test_a_batch_with_one_request_to_prepare_keeps_two_writes_and_its_order(
    emulator: EmulatorHandle,
) -> None:
    """Received first, then the request with files prepared without the lock (the texts
    have nothing to prepare: the host is not asked), then handed over, then accepted: the
    whole batch, two writes."""
    installed = await emulator.install()
    host = WatchingHost(emulator, installed)
    prepared: list[str] = []

    def prepare(request: Request, _download: object) -> None:
        # When it runs, the batch is saved as received and not yet accepted.
        inbox = host.documents[-1]["inbox"]
        received = [item["request"]["message_id"] for item in inbox["received"]]
        assert received == ["m-1", "m-2", "m-3"]
        prepared.append(request.message_id)

    host.prepare = prepare  # type: ignore[method-assign]
    async with connected_agent(emulator, installed, host, encrypted=False) as agent:
        before = len(host.documents)
        batch = [_plain("m-1", "a"), _plain("m-2", "file", files=True), _plain("m-3", "b")]
        await agent._inbox.process(batch)
        assert len(host.documents) == before + 2
        assert prepared == ["m-2"]
        assert [r.message_id for r in host.delivered] == ["m-1", "m-2", "m-3"]
        assert host.received_at_event == [True, True, True]


async def test_only_a_request_with_files_is_given_to_the_host_to_prepare(
    hass: HomeAssistant,
) -> None:
    """The client's one rule (inbox/delivery.py) never rules out what events.py would
    prepare: a request without files has nothing to prepare, even with a media folder set;
    one with files (a voice note too) is given to the host."""

    async def download(_message_id: str, _index: int) -> bytes:
        raise AssertionError("nothing is downloaded")

    events = MessageEvents(hass, "entry", "agent", "/media/pacerelle")
    text = Request("m-1", "c-1", "u-1", "1", "a-1", True, "text", "hi", None, 0.0)
    assert with_files([text]) == []
    assert events.prepare(text, download) is None
    with_file = replace(text, attachments=({"id": "f-1", "mime": "audio/ogg"},))
    assert with_files([text, with_file]) == [with_file]
    preparation = events.prepare(with_file, download)
    assert preparation is not None
    preparation.close()  # type: ignore[attr-defined]  # a coroutine, never started
