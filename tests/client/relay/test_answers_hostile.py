"""A hostile relay's token answers and gateway frames never break an entry for good.

The relay is the emulator behind a middleware of the test's own (tests/helpers/hostile_relay.py):
set-up meets a hostile runtime-token answer and must end in SETUP_RETRY (not
SETUP_ERROR), then recover on its own retry once the relay behaves; a connected entry
meets deeply nested frames and must skip them without dropping the connection.
"""

import base64
import json
import logging
from datetime import timedelta

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    async_capture_events,
    async_fire_time_changed,
)

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.errors import PacerelleResponseError
from custom_components.pacerelle.client.limits import MAX_JSON_DEPTH
from custom_components.pacerelle.client.relay.answers import parse_json
from custom_components.pacerelle.client.relay.frames import FrameError, parse_frame
from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import add_entry
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.hostile_relay import Hostility
from tests.helpers.runtime import wait_until

pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]

DEEP = 100_000  # past the stack: Python's json raises RecursionError


def _token_answer(expires_in: str, token: str = '"t0ken"') -> bytes:
    return (
        '{"agent_id":"a","owner_id":"o","conversation_id":"c",'
        f'"agent_token":{token},"expires_in":{expires_in}}}'
    ).encode()


HOSTILE_TOKEN_ANSWERS = {
    "infinity": _token_answer("Infinity"),
    "minus_infinity": _token_answer("-Infinity"),
    "nan": _token_answer("NaN"),
    "overflowing_float": _token_answer("1e999"),
    "huge_float": _token_answer("1e300"),
    "huge_int": _token_answer("1" + "0" * 40),
    "negative": _token_answer("-5"),
    "string": _token_answer('"900"'),
    "boolean": _token_answer("true"),
    "nested_value": _token_answer("[" * DEEP + "]" * DEEP),
    "nested_answer": b"[" * DEEP + b"]" * DEEP,
    "token_with_newline": _token_answer("900", token='"a\\r\\nX-Injected: 1"'),
    "not_json": b"{expires_in: 900",
}


@pytest.mark.parametrize("answer", HOSTILE_TOKEN_ANSWERS.values(), ids=HOSTILE_TOKEN_ANSWERS)
async def test_hostile_token_answer_is_retried_then_recovers(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    answer: bytes,
    caplog: pytest.LogCaptureFixture,
) -> None:
    installed = await hostile_emulator.install()
    entry = await add_entry(hass, hostile_emulator, installed)
    hostility.token_answer = answer

    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]

    # The relay behaves again: Home Assistant's own retry (with its backoff) sets it up.
    hostility.token_answer = None
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=10))
    await wait_until(lambda: entry.state is ConfigEntryState.LOADED)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_deeply_nested_frames_are_skipped_and_the_connection_stays(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    caplog: pytest.LogCaptureFixture,
) -> None:
    installed = await hostile_emulator.install()
    entry = await add_entry(hass, hostile_emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    tokens_before = hostility.token_requests

    hostile = [
        '{"type":"MSG","id":' + "[" * DEEP + "]" * DEEP + "}",
        '{"type":"MSG","attachments":'
        + "[" * (MAX_JSON_DEPTH + 8)
        + "]" * (MAX_JSON_DEPTH + 8)
        + "}",
        "[" * DEEP,  # unterminated too
    ]
    caplog.set_level(logging.WARNING)
    await hostile_emulator.faults(inject_frames=hostile)
    message_id = await hostile_emulator.send(installed.conversation_id, text="still there?")
    await wait_until(lambda: len(events) == 1)

    assert events[0].data["message_id"] == message_id
    assert caplog.text.count("Ignoring a malformed gateway frame") == len(hostile)
    assert "Unexpected error" not in caplog.text
    # The same connection all along: no reconnection, hence no new runtime token.
    assert hostility.token_requests == tokens_before
    assert runtime.status.state is ConnectionState.CONNECTED
    assert await hass.config_entries.async_unload(entry.entry_id)


@pytest.mark.parametrize(
    "answer",
    [HOSTILE_TOKEN_ANSWERS[name] for name in ("infinity", "nan", "nested_answer")],
    ids=["infinity", "nan", "nested_answer"],
)
async def test_hostile_token_answer_at_reconnection_backs_off_then_recovers(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    answer: bytes,
    caplog: pytest.LogCaptureFixture,
) -> None:
    installed = await hostile_emulator.install()
    entry = await add_entry(hass, hostile_emulator, installed)
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)

    hostility.token_answer = answer
    tokens_before = hostility.token_requests
    await hostile_emulator.faults(drop_connections=True)
    await wait_until(lambda: hostility.token_requests >= tokens_before + 2)  # retried
    assert runtime.status.state is ConnectionState.RECONNECTING
    assert entry.state is ConfigEntryState.LOADED

    hostility.token_answer = None
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED, within=15)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert await hass.config_entries.async_unload(entry.entry_id)


@pytest.mark.parametrize(
    "text",
    [
        "[" * DEEP + "]" * DEEP,
        '{"a":' * DEEP + "1" + "}" * DEEP,
        "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
        '{"x": NaN}',
        '{"x": -Infinity}',
        '{"x": 1e999}',
        '{"x": ' + "9" * 5000 + "}",
        "\ud800",
        "["
        + "[]," * 5000
        + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    ],
    ids=[
        "deep_list",
        "deep_object",
        "past_the_cap",
        "nan",
        "infinity",
        "overflow",
        "long_int",
        "lone_surrogate",
        "many_containers",
    ],
)
def test_server_json_door_refuses_with_its_own_error(text: str) -> None:
    with pytest.raises(PacerelleResponseError):
        parse_json(text, "answer")
    with pytest.raises(FrameError):
        parse_frame(text)


def test_server_json_door_takes_what_the_protocol_nests() -> None:
    nested = {"attachments": [{"name": "a", "extra": {"width": 3.5}}], "type": "X"}
    assert parse_json(json.dumps(nested), "answer") == nested
    deepest = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(deepest, "answer") is not None


async def test_deeply_nested_group_payload_is_refused_not_left_for_redelivery(
    hostile_emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """The payload of a group MSG is parsed before decryption (to find its key): a nested
    one must be refused like any bad payload, not fail the whole batch (which the relay would
    redeliver, with the legitimate messages in it, at every connection)."""
    installed = await hostile_emulator.install()
    recorder = Recorder()
    poison = {
        "type": "MSG",
        "id": "group-poison",
        "conversation_id": installed.conversation_id,
        "from": installed.owner_id,
        "from_device_id": "1",
        "to": f"group:{installed.conversation_id}",
        "payload_b64": base64.b64encode(b"[" * DEEP + b"]" * DEEP).decode(),
        "encrypted": True,
    }
    async with connected_agent(hostile_emulator, installed, recorder) as agent:
        await hostile_emulator.faults(inject_frames=[json.dumps(poison)])
        await wait_for(lambda: "group-poison" in agent.data.inbox.rejected, within=5)
        message_id = await hostile_emulator.send(installed.conversation_id, text="still there?")
        await wait_for(lambda: [r.message_id for r in recorder.delivered] == [message_id])
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
