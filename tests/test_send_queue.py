"""Sends while offline are queued, then delivered in order, once each (client/send_queue.py).

Through Home Assistant's actions and the running emulator: its gateway refuses upgrades
(`gateway_status`) and drops the agent's connection, so the agent really is offline.
"""

from typing import Any

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.events import EVENT_MESSAGE_STATUS
from tests.emulator_fixtures import EmulatorHandle
from tests.runtime_harness import wait_until
from tests.services_harness import Agent, call, received, spoken_agent

RECONNECT_WITHIN = 30.0  # the agent's backoff after a refused upgrade is at most this


async def go_offline(emulator: EmulatorHandle, agent: Agent) -> None:
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: agent.runtime.status.state is not ConnectionState.CONNECTED)


def statuses(events: list[Any]) -> list[tuple[str, str]]:
    return [(event.data["message_id"], event.data["status"]) for event in events]


async def test_offline_sends_are_delivered_in_order_once_each(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await spoken_agent(hass, emulator)
    events = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await go_offline(emulator, agent)

    ids = []
    for number in range(5):
        result = await call(hass, "send_message", {"text": f"Alert {number}"})
        assert result["status"] == "queued"
        ids.append(result["message_id"])
    assert agent.runtime.status.queued_sends == 5
    assert statuses(events) == [(message_id, "queued") for message_id in ids]
    assert await emulator.inbox(agent.conversation_id) == []

    await emulator.faults(reset=True)
    inbox = await emulator.wait_inbox(agent.conversation_id, 5, within=RECONNECT_WITHIN)
    # A sixth, sent once connected, comes after the queued ones.
    sixth = await call(hass, "send_message", {"text": "Back"})
    assert sixth["status"] == "sent"
    inbox = await received(emulator, agent, 6)
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
    agent = await spoken_agent(hass, emulator)
    await go_offline(emulator, agent)
    error = await refused_call(hass, {"text": "now or never", "expire_after": 0})
    assert error == "not_connected"
    assert agent.runtime.status.queued_sends == 0


async def refused_call(hass: HomeAssistant, data: dict[str, Any]) -> str | None:
    from homeassistant.exceptions import HomeAssistantError

    try:
        await call(hass, "send_message", data)
    except HomeAssistantError as err:
        return err.translation_key
    return None
