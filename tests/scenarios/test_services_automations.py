"""The README's automations, for real: answer "status", send a snapshot when the doorbell rings."""

import base64

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from tests.helpers.agent import start_agent
from tests.helpers.cameras import PNG, add_camera
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes

ANSWER_STATUS = {
    "alias": "Answer status",
    "triggers": [
        {"trigger": "event", "event_type": "pacerelle_message", "event_data": {"text": "status"}}
    ],
    "actions": [
        {"action": "pacerelle.get_status", "response_variable": "agent"},
        {
            "action": "pacerelle.send_message",
            "data": {
                "source_message_id": "{{ trigger.event.data.message_id }}",
                "text": "Home Assistant is {{ agent.state }}."
                " Front door: {{ states('lock.front') }}.",
            },
        },
        {
            "action": "pacerelle.mark_processed",
            "data": {"message_id": "{{ trigger.event.data.message_id }}", "note": "status sent"},
        },
    ],
}

DOORBELL_SNAPSHOT = {
    "alias": "Doorbell snapshot",
    "triggers": [{"trigger": "state", "entity_id": "input_boolean.doorbell", "to": "on"}],
    "actions": [
        {
            "action": "pacerelle.send_message",
            "data": {"text": "Someone is at the door", "camera_snapshots": "camera.doorbell"},
        }
    ],
}


async def test_answer_status(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    assert await async_setup_component(hass, "automation", {"automation": [ANSWER_STATUS]})
    hass.states.async_set("lock.front", "locked")
    request = await human_writes(emulator, agent, text="status", device_id="2")
    inbox = await emulator.wait_inbox(agent.conversation_id, 1)
    assert inbox[0]["text"] == "Home Assistant is connected. Front door: locked."
    assert (inbox[0]["device_id"], inbox[0]["reply_to_message_id"]) == ("2", request["message_id"])
    # Marked processed at once, although the event fires before the request is saved.
    await wait_until(
        lambda: request["message_id"]
        not in {r.message_id for r in agent.runtime.agent.pending_requests()}
    )
    handled = agent.runtime.agent.history().requests[-1]
    assert (handled.request.message_id, handled.note) == (request["message_id"], "status sent")


async def test_doorbell_snapshot(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    await add_camera(hass, "Doorbell", "doorbell")
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"doorbell": {}}})
    agent = await start_agent(hass, emulator, spoken=True)
    assert await async_setup_component(hass, "automation", {"automation": [DOORBELL_SNAPSHOT]})
    await hass.services.async_call(
        "input_boolean", "turn_on", {"entity_id": "input_boolean.doorbell"}, blocking=True
    )
    inbox = await emulator.wait_inbox(agent.conversation_id, 1)
    assert inbox[0]["payload"]["text"] == "Someone is at the door"
    [file] = inbox[0]["files"]
    assert base64.b64decode(file["content_b64"]) == PNG
