"""Sends while offline are queued, then delivered in order, once each (client/values/send_queue.py).

Through Home Assistant's actions and the running emulator: its gateway refuses upgrades
(`gateway_status`) and drops the agent's connection, so the agent really is offline.
"""

import time
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.limits import (
    MAX_QUEUED_SEND_BYTES,
    MAX_QUEUED_SENDS,
    MAX_SEND_TEXT_CHARS,
)
from custom_components.pacerelle.events import EVENT_MESSAGE_STATUS
from custom_components.pacerelle.llm.send_tools import LLM_EXPIRE_AFTER
from tests.helpers.agent import go_offline, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import call as llm_call
from tests.helpers.llm import human_says
from tests.helpers.readme import example
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, received, refused

RECONNECT_WITHIN = 30.0  # the agent's backoff after a refused upgrade is at most this


def statuses(events: list[Any]) -> list[tuple[str, str]]:
    return [(event.data["message_id"], event.data["status"]) for event in events]


async def test_offline_sends_are_delivered_in_order_once_each(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    events = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await go_offline(emulator, agent)

    ids = []
    for number in range(5):
        result = await call(hass, "send_message", {"text": f"Alert {number}"})
        assert result["status"] == "queued"
        ids.append(result["message_id"])
    assert agent.runtime.status.queued_sends == 5
    assert (await call(hass, "get_status", {}))["queued_sends"] == 5
    assert statuses(events) == [(message_id, "queued") for message_id in ids]
    assert await emulator.inbox(agent.conversation_id) == []

    await emulator.faults(reset=True)
    inbox = await emulator.wait_inbox(agent.conversation_id, 5, within=RECONNECT_WITHIN)
    # A sixth, sent once connected, comes after the queued ones.
    sixth = await call(hass, "send_message", {"text": "Back"})
    assert sixth["status"] == "sent"
    inbox = await received(emulator, agent, 6)
    await wait_until(lambda: len(events) == 11)
    assert [m["text"] for m in inbox] == [*(f"Alert {n}" for n in range(5)), "Back"]
    assert [m["message_id"] for m in inbox] == [*ids, sixth["message_id"]]
    assert all(m["history"] == "valid" for m in inbox)  # decrypted by the person's device
    assert agent.runtime.status.queued_sends == 0
    assert statuses(events)[5:] == [(message_id, "sent") for message_id in ids] + [
        (sixth["message_id"], "sent")
    ]
    history = await call(hass, "get_history", {})
    sent = {r["message_id"]: r["status"] for r in history["replies"]}
    assert [sent[message_id] for message_id in ids] == ["sent"] * 5


async def test_expire_after_zero_fails_at_once_as_before(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await go_offline(emulator, agent)
    await refused(
        hass, "send_message", {"text": "now or never", "expire_after": 0}, "not_connected"
    )
    assert agent.runtime.status.queued_sends == 0


async def test_an_expired_send_is_dropped_reported_and_never_sent_late(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    events = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await go_offline(emulator, agent)
    stale = await call(hass, "send_message", {"text": "Stale", "expire_after": 0.5})
    kept = await call(hass, "send_message", {"text": "Kept", "expire_after": 60})
    # Dropped at its expiry while still offline, not only once the connection is back.
    await wait_until(lambda: (stale["message_id"], "expired") in statuses(events))
    assert agent.runtime.status.queued_sends == 1

    await emulator.faults(reset=True)
    inbox = await emulator.wait_inbox(agent.conversation_id, 1, within=RECONNECT_WITHIN)
    await wait_until(lambda: len(events) == 4)
    assert [m["text"] for m in inbox] == ["Kept"]
    # The stale one may expire before the second call returns (a loaded machine can take
    # over 0.5 s for it): every other order is fixed.
    queued = [(stale["message_id"], "queued"), (kept["message_id"], "queued")]
    expired, sent = (stale["message_id"], "expired"), (kept["message_id"], "sent")
    assert statuses(events) in (
        [*queued, expired, sent],
        [queued[0], expired, queued[1], sent],
    )
    history = await call(hass, "get_history", {})
    sent = {r["message_id"]: r["status"] for r in history["replies"]}
    assert sent[stale["message_id"]] == "expired"


async def test_the_queue_is_bounded_and_can_be_cleared(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    events = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await go_offline(emulator, agent)
    for number in range(MAX_QUEUED_SENDS):
        await call(hass, "send_message", {"text": f"Reading {number}"})
    error = await refused(hass, "send_message", {"text": "One too many"}, "queue_full")
    assert str(MAX_QUEUED_SENDS) in (error.translation_placeholders or {})["detail"]
    assert agent.runtime.status.queued_sends == MAX_QUEUED_SENDS
    diagnostics = agent.runtime.agent.data.queued
    assert len(diagnostics) == MAX_QUEUED_SENDS

    assert await call(hass, "clear_queue", {}) == {"cleared": MAX_QUEUED_SENDS}
    assert agent.runtime.status.queued_sends == 0
    assert [e.data["status"] for e in events].count("cleared") == MAX_QUEUED_SENDS
    await emulator.faults(reset=True)
    await wait_until(
        lambda: agent.runtime.status.state is ConnectionState.CONNECTED, within=RECONNECT_WITHIN
    )
    after = await call(hass, "send_message", {"text": "Only this"})
    inbox = await received(emulator, agent, 1)
    assert [m["message_id"] for m in inbox] == [after["message_id"]]


async def test_the_queue_is_bounded_in_bytes(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await go_offline(emulator, agent)
    big = {"text": "x" * MAX_SEND_TEXT_CHARS}  # the longest text allowed
    queued = 0
    while (
        agent.runtime.agent.data.queued.total_bytes * (queued + 1) <= MAX_QUEUED_SEND_BYTES * queued
    ):
        await call(hass, "send_message", big)  # room for one more of the same size
        queued += 1
    error = await refused(hass, "send_message", big, "queue_full")
    assert str(MAX_QUEUED_SEND_BYTES) in (error.translation_placeholders or {})["detail"]
    assert queued == agent.runtime.status.queued_sends > 1
    assert agent.runtime.agent.data.queued.total_bytes <= MAX_QUEUED_SEND_BYTES


async def test_ask_while_offline_waits_queued_for_its_own_timeout(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    events = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await go_offline(emulator, agent)
    answer = await call(hass, "ask", {"kind": "confirm", "title": "Open?", "timeout": 1})
    assert answer["status"] == "timeout"
    # Its question expired with the wait: it never reaches the person afterwards.
    await wait_until(lambda: (answer["message_id"], "expired") in statuses(events), within=5)
    await emulator.faults(reset=True)
    await wait_until(
        lambda: agent.runtime.status.state is ConnectionState.CONNECTED, within=RECONNECT_WITHIN
    )
    after = await call(hass, "send_message", {"text": "Never mind"})
    inbox = await received(emulator, agent, 1)
    assert [m["message_id"] for m in inbox] == [after["message_id"]]


async def test_llm_tool_send_while_offline_is_queued_for_five_minutes(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime = entry.runtime_data
    asked = await human_says(emulator, runtime, installed.conversation_id, "Lights off?")
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: runtime.status.state is not ConnectionState.CONNECTED)
    before = time.time()
    sent = await llm_call(hass, "send_message", text="Done.", sourceMessageId=asked)
    assert sent["status"] == "queued"
    [queued] = runtime.agent.data.queued.sends
    assert queued.expires_at - before == pytest.approx(LLM_EXPIRE_AFTER, abs=5)
    await emulator.faults(reset=True)
    [reply] = await emulator.wait_inbox(installed.conversation_id, 1, within=RECONNECT_WITHIN)
    assert (reply["message_id"], reply["text"]) == (sent["message_id"], "Done.")


async def test_readme_alert_example_reaches_the_person_after_an_outage(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    config = example("Alert me even if the connection is down")
    assert await async_setup_component(hass, "automation", {"automation": [config]})
    await go_offline(emulator, agent)
    hass.states.async_set("binary_sensor.kitchen_leak", "on")
    await wait_until(lambda: agent.runtime.status.queued_sends == 1)
    await emulator.faults(reset=True)
    [alert] = await emulator.wait_inbox(agent.conversation_id, 1, within=RECONNECT_WITHIN)
    assert alert["text"] == "Water leak in the kitchen!"
