"""The event entity fires for each accepted message of its own agent, against the emulator."""

from unittest.mock import patch

from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN, Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from syrupy.assertion import SnapshotAssertion

from custom_components.pacerelle.events import EVENT_MESSAGE
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import ha_snapshot, replacing, state_of, wait_state


async def test_messages_and_widget_answers_fire_the_event_entity(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    installed = setup.installed
    messages = setup.entity_id(hass, "event", "messages")
    assert state_of(hass, messages) == STATE_UNKNOWN

    message_id = await emulator.send(installed.conversation_id, text="Is the door locked?")
    await wait_state(hass, messages, lambda state: state != STATE_UNKNOWN)
    state = hass.states.get(messages)
    assert state is not None
    first_fired = state.state
    assert state.attributes["event_type"] == "message"
    assert state.attributes["message_id"] == message_id
    assert "text" not in state.attributes  # what people wrote is in the bus event only
    assert state.attributes["trusted"] is True
    assert state.attributes["sender_id"] == installed.owner_id
    assert state.attributes["sender_device_id"] == "1"
    assert state.attributes["conversation_id"] == installed.conversation_id
    assert "entry_id" not in state.attributes

    answer = {"ref": "w-door", "id": "r-1", "value": "yes"}
    answer_id = await emulator.send(installed.conversation_id, widget_response=answer)
    await wait_state(hass, messages, lambda state: state != first_fired)
    state = hass.states.get(messages)
    assert state is not None
    assert state.attributes["event_type"] == "widget_response"
    assert state.attributes["message_id"] == answer_id
    assert not {"widget", "widget_response"} & set(state.attributes)

    # Another agent's message on the bus is not this entity's.
    hass.bus.async_fire(EVENT_MESSAGE, {"entry_id": "someone-else", "kind": "text"})
    await hass.async_block_till_done()
    after = hass.states.get(messages)
    assert after is not None
    assert after.attributes["message_id"] == answer_id

    # Revoked: nothing can arrive any more.
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
    await wait_state(hass, messages, STATE_UNAVAILABLE)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_event_snapshot(
    hass: HomeAssistant, emulator: EmulatorHandle, snapshot: SnapshotAssertion
) -> None:
    with patch("custom_components.pacerelle.PLATFORMS", [Platform.EVENT]):
        setup = await start_agent(hass, emulator)
    matcher = replacing(setup.volatile())
    snapshot = ha_snapshot(snapshot)
    (entry,) = [  # the agent's (the owner's conversation has its own: conversation entities)
        e
        for e in er.async_entries_for_config_entry(er.async_get(hass), setup.entry.entry_id)
        if e.config_subentry_id is None
    ]
    assert entry == snapshot(name="entry", matcher=matcher)
    assert hass.states.get(entry.entity_id) == snapshot(name="state", matcher=matcher)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
