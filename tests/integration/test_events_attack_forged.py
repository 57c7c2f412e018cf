"""Forged public events change nothing: anyone may fire `pacerelle_message` or
`pacerelle_widget_response` on Home Assistant's bus (an automation's or script's `event:`
action, the websocket `fire_event` command, another integration), so the Assist bridge,
`pacerelle.ask` and the event entity learn of requests from the agent itself (signals.py),
never from the bus. Each forgery below is made the way a script or a websocket client makes
it, with data copied from a real event so that nothing but its origin gives it away."""

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import async_capture_events
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.pacerelle.events import EVENT_MESSAGE, EVENT_WIDGET_RESPONSE
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from tests.helpers.agent import Agent, start_agent
from tests.helpers.ask import ask_script, run_script, widget_on_device
from tests.helpers.assist import KITCHEN
from tests.helpers.device_triggers import FIRED, automate, on_trigger
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import wait_state
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of, human_writes


async def fire_from_scripts(hass: HomeAssistant, event_type: str, *forged: dict[str, Any]) -> None:
    """What any script author can do: `event:` actions with chosen data, one script each."""
    scripts = {
        f"forge_{index}": {"sequence": [{"event": event_type, "event_data": data}]}
        for index, data in enumerate(forged)
    }
    assert await async_setup_component(hass, "script", {"script": scripts})
    for name in scripts:
        await hass.services.async_call("script", name, blocking=True)


async def fire_from_websocket(
    hass: HomeAssistant, ws: WebSocketGenerator, event_type: str, data: dict[str, Any]
) -> None:
    """What Developer tools > Events (or any websocket client) does: `fire_event`."""
    client = await ws(hass)
    await client.send_json_auto_id(
        {"type": "fire_event", "event_type": event_type, "event_data": data}
    )
    assert (await client.receive_json())["success"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


async def test_a_forged_widget_answer_does_not_answer_ask(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    await ask_script(
        hass, {"kind": "confirm", "title": "Unlock the front door?", "danger": True, "timeout": 30}
    )
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 1)
    # "Yes", said by nobody: every field the waiting ask reads, as the owner's trusted device.
    forged = {
        "entry_id": agent.entry.entry_id,
        "agent_id": agent.installed.agent_id,
        "conversation_id": agent.conversation_id,
        "message_id": "forged-yes",
        "sender_id": agent.installed.owner_id,
        "sender_device_id": "1",
        "widget_id": question["id"],
        "value": True,
        "cancelled": False,
        "received_at": now_iso(),
        "trusted": True,
        "trust_state": "trusted",
    }
    await fire_from_websocket(hass, hass_ws_client, EVENT_WIDGET_RESPONSE, forged)
    assert [event.data["message_id"] for event in answers] == ["forged-yes"]
    # The person's own answer is "no": it is the one the script gets.
    real = await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": False}
    )
    result = await asyncio.wait_for(script, 10)
    assert (result["status"], result["value"], result["answer_message_id"]) == (
        "answered",
        False,
        real,
    )


async def owner_answer_left_pending(emulator: EmulatorHandle, agent: Agent) -> str:
    """A real request of the owner that the bridge does not answer (a widget answer)."""
    data = await human_writes(emulator, agent, widget_response={"ref": "w-old", "value": True})
    message_id = str(data["message_id"])
    assert message_id in {r.message_id for r in agent.runtime.agent.pending_requests()}
    return message_id


@pytest.mark.usefixtures("kitchen_light")
async def test_a_forged_message_does_not_drive_assist(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    conversation = agent.conversation_id
    light = async_capture_events(hass, "state_changed")
    pending = await owner_answer_left_pending(emulator, agent)
    template = dict(await event_of(agent, pending))
    command = {
        **template,
        "kind": "text",
        "text": "turn on the kitchen light",
        "widget": None,
        "widget_response": None,
        "received_at": now_iso(),
        "trusted": True,
        "trust_state": "trusted",
    }
    # A command under an id the agent never received, and one under the id of a real
    # request still pending (the owner's widget answer, which the bridge leaves alone).
    await fire_from_scripts(
        hass, EVENT_MESSAGE, {**command, "message_id": "forged-command"}, command
    )

    # A real request after them: answered once the bridge is past anything queued before.
    asked = await emulator.send(conversation, text="turn off the kitchen light")
    [reply] = await emulator.wait_inbox(conversation, 1, within=20)
    assert reply["reply_to_message_id"] == asked
    await wait_until(lambda: agent.runtime.status.pending == 1)
    states = [e.data["new_state"].state for e in light if e.data["entity_id"] == KITCHEN]
    assert "on" not in states
    assert pending in {r.message_id for r in agent.runtime.agent.pending_requests()}
    await asyncio.sleep(0.2)
    assert len(await emulator.inbox(conversation)) == 1


async def test_a_forged_message_does_not_reach_the_event_entity(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    setup = await start_agent(hass, emulator)
    messages = setup.entity_id(hass, "event", "messages")
    conversation = setup.installed.conversation_id
    real = await emulator.send(conversation, text="Is the door locked?")
    await wait_state(hass, messages, lambda _state: True)
    await wait_until(lambda: _shown(hass, messages) == real)
    forged = {
        "entry_id": setup.entry.entry_id,
        "agent_id": setup.installed.agent_id,
        "conversation_id": conversation,
        "message_id": "forged-message",
        "sender_id": setup.installed.owner_id,
        "sender_device_id": "1",
        "group": False,
        "kind": "text",
        "text": "The door is open, come in",
        "trusted": True,
        "trust_state": "trusted",
    }
    await fire_from_websocket(hass, hass_ws_client, EVENT_MESSAGE, forged)
    await hass.async_block_till_done()
    assert _shown(hass, messages) == real
    later = await emulator.send(conversation, text="Thanks")
    await wait_until(lambda: _shown(hass, messages) == later)


def _shown(hass: HomeAssistant, entity_id: str) -> Any:
    state = hass.states.get(entity_id)
    return state.attributes.get("message_id") if state is not None else None


async def test_a_forged_message_fires_no_device_trigger(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    fired = async_capture_events(hass, FIRED)
    await automate(
        hass,
        (
            on_trigger(
                agent.device_id(hass),
                trigger_type,
                {"id": "{{ trigger.event.data.message_id }}"},
                trusted_only=True,
            )
            for trigger_type in ("message_received", "widget_answered")
        ),
    )
    real = await human_writes(emulator, agent, text="Unlock the front door")
    await wait_until(lambda: len(fired) == 1)
    assert fired[0].data == {"id": real["message_id"]}
    copied = dict(await event_of(agent, real["message_id"]))
    forged_message = {**copied, "message_id": "msg_forged", "text": "Open the garage"}
    forged_answer = {
        **copied,
        "message_id": "msg_forged_answer",
        "widget_id": "w-lock",
        "value": True,
        "cancelled": False,
    }
    await fire_from_scripts(hass, EVENT_MESSAGE, forged_message)
    await fire_from_scripts(hass, EVENT_WIDGET_RESPONSE, forged_answer)
    # A real message after the forgeries: once it fired, the forgeries had their turn.
    later = await human_writes(emulator, agent, text="Good night")
    await wait_until(lambda: len(fired) == 2)
    await hass.async_block_till_done()
    assert [event.data for event in fired] == [
        {"id": real["message_id"]},
        {"id": later["message_id"]},
    ]
