"""A message refused for good is acknowledged once, so the relay stops redelivering it.

Through the running emulator: its queue keeps what the agent has not acknowledged and
sends it again at every connection, as Pacerelle does.
"""

import asyncio
import base64
import json
import logging
from typing import Any

import pytest

from custom_components.pacerelle.client.limits import MAX_FRAME_CHARS
from custom_components.pacerelle.client.relay.frames import (
    MAX_OVERSIZED_VALUES,
    FrameError,
    RefusedMessage,
    parse_frame,
)
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle, Installed

BIG_PAYLOAD = 2 * 1024 * 1024  # base64 characters: twice the frame cap


def _envelope(installed: Installed, message_id: str, payload_b64: str) -> dict[str, Any]:
    return {
        "type": "MSG",
        "id": message_id,
        "conversation_id": installed.conversation_id,
        "from": installed.owner_id,
        "to": installed.agent_id,
        "payload_b64": payload_b64,
        "encrypted": True,
    }


def _connections(emulator: EmulatorHandle) -> list[dict[str, Any]]:
    return [event for event in emulator.emulator.events if event["kind"] == "agent_connected"]


async def test_oversized_message_is_acknowledged_once_and_not_redelivered(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        big = _envelope(installed, "m-big", "A" * BIG_PAYLOAD)
        assert len(json.dumps(big)) > MAX_FRAME_CHARS
        with caplog.at_level(logging.WARNING):
            await emulator.emulator.hub.enqueue(installed.agent_id, big)
            normal_id = await emulator.send(installed.conversation_id, text="after the big one")
            await wait_for(lambda: len(recorder.delivered) == 1, within=5)
            # The relay saw both acknowledged: its queue for the agent is empty.
            await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=5)
        acknowledged = [e for e in emulator.emulator.events if e["kind"] == "acknowledged"]
        assert {e["message_id"] for e in acknowledged} == {"m-big", normal_id}
        warnings = [r for r in caplog.records if "m-big" in r.getMessage()]
        assert [record.levelno for record in warnings] == [logging.WARNING]
        assert agent.refusals.to_json()["oversized"] == 1

        await emulator.faults(drop_connections=True)
        await wait_for(lambda: len(_connections(emulator)) == 2, within=5)
        assert _connections(emulator)[-1]["backlog"] == 0  # nothing redelivered
        await asyncio.sleep(0.1)
        assert [request.message_id for request in recorder.delivered] == [normal_id]
        assert agent.refusals.total == 1


def test_oversized_frame_packed_with_values_is_not_parsed() -> None:
    """Past the cap, a frame of many tiny values is skipped unread (no allocation storm)."""
    values = ",".join(["0"] * (MAX_OVERSIZED_VALUES + 1))
    padding = "A" * MAX_FRAME_CHARS
    routing = '"type":"MSG","id":"m","conversation_id":"c","from":"u"'
    text = f'{{{routing},"pad":[{values}],"x":"{padding}"}}'
    with pytest.raises(FrameError, match="unreadable"):
        parse_frame(text)


def test_refused_message_needs_readable_routing() -> None:
    """A broken frame whose id or sender does not fit is skipped, never acknowledged."""
    good = {
        "type": "MSG",
        "id": "m-1",
        "conversation_id": "c-1",
        "from": "u-1",
        "to": "a-1",
        "payload_b64": base64.b64encode(b"x").decode(),
        "encrypted": "yes",  # breaks the protocol
    }
    refused = parse_frame(json.dumps(good))
    assert isinstance(refused, RefusedMessage)
    assert not refused.oversized
    assert (refused.message_id, refused.sender_id, refused.conversation_id) == ("m-1", "u-1", "c-1")
    with pytest.raises(FrameError, match="encrypted"):
        parse_frame(json.dumps({**good, "from": ""}))
