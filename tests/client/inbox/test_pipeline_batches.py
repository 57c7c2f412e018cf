"""The inbox pipeline on a connected agent (emulator over TCP): one message twice in a batch,
a reused id with other content, a host preparation that fails, group keys that cannot be
fetched and a group payload that is not one."""

import asyncio
import logging
from collections.abc import Awaitable

import pytest

from custom_components.pacerelle.client.relay.frames import InboundMessage, group_recipient
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.requests import Request
from tests.helpers.client_agent import Recorder, connected_agent, make_agent
from tests.helpers.emulator import EmulatorHandle


def _message(
    message_id: str,
    text: bytes,
    *,
    digest: str | None = None,
    conversation_id: str = "c-1",
    to: str = "a-1",
    encrypted: bool = False,
    attachments: tuple[dict[str, object], ...] = (),
) -> InboundMessage:
    return InboundMessage(
        message_id,
        conversation_id,
        "u-1",
        "1",
        to,
        text,
        encrypted,
        None,
        attachments,
        digest or f"digest-of-{message_id}",
    )


async def test_the_same_message_twice_in_a_batch_is_handed_over_once(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        original = _message("m-1", b"first")
        forged = _message("m-1", b"other content", digest="another-digest")
        with caplog.at_level(logging.ERROR):
            await agent._inbox.process([original, original, forged])
        assert [r.text for r in recorder.delivered] == ["first"]
        assert "reuses a known id with different content" in caplog.text
        # The forged copy arriving later, alone, is not handed over either.
        caplog.clear()
        with caplog.at_level(logging.ERROR):
            await agent._inbox.process([forged])
        assert [r.text for r in recorder.delivered] == ["first"]
        assert "reuses a known id" in caplog.text


class FailingPreparation(Recorder):
    """A host whose preparation (saving files) fails for every request."""

    def prepare(self, request: Request, _download: object) -> Awaitable[None]:  # type: ignore[override]
        async def fail() -> None:
            await asyncio.sleep(0)
            raise OSError("disk full")

        return fail()


async def test_a_failed_preparation_is_logged_and_the_request_still_handed_over(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    recorder = FailingPreparation()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        with caplog.at_level(logging.ERROR):
            file = {"id": "f-1", "name": "a.txt", "mime": "text/plain", "size": 1, "blob_id": "b"}
            await agent._inbox.process([_message("m-1", b"with files", attachments=(file,))])
        assert [r.text for r in recorder.delivered] == ["with files"]
        assert "Could not prepare an incoming request" in caplog.text
        assert agent.find_request("m-1") is not None


async def test_group_messages_whose_key_cannot_be_had(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """Keys of an unknown group cannot be fetched: its message waits (neither handed over
    nor refused); a group payload that is not one is refused without a fetch."""
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        key = groups.GroupKey("c-unknown", "k-1", 1, bytes(32))
        waiting = _message(
            "g-1",
            groups.seal_message(key, "hi"),
            conversation_id="c-unknown",
            to=group_recipient("c-unknown"),
            encrypted=True,
        )
        garbage = _message(
            "g-2",
            b"not a group payload",
            conversation_id="c-g",
            to=group_recipient("c-g"),
            encrypted=True,
        )
        with caplog.at_level(logging.WARNING):
            await agent._inbox.process([waiting, garbage])
        assert "Could not fetch group keys" in caplog.text
        assert recorder.delivered == []
        inbox = agent.data.inbox
        assert "g-1" not in inbox.rejected
        assert "g-1" not in inbox.received
        assert "g-2" in inbox.rejected


async def test_a_message_handled_while_disconnected_is_handed_over_once(
    emulator: EmulatorHandle,
) -> None:
    """No connection for the ACK_READ: the request is still handed over, the missing
    acknowledgement raises nothing, and the relay's redelivery is not handed over again."""
    installed = await emulator.install()
    recorder = Recorder()
    agent = make_agent(emulator, installed, recorder, encrypted=False)  # never connected
    message = _message("m-1", b"while offline")
    await agent._inbox.process([message])
    assert [r.text for r in recorder.delivered] == ["while offline"]
    await agent._inbox.process([message])
    assert [r.text for r in recorder.delivered] == ["while offline"]
