"""Messages that waited at the relay while Home Assistant was off reach the automations."""

import asyncio

from homeassistant.core import CoreState, HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.events import EVENT_MESSAGE
from tests.helpers.agent import add_entry, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes


async def test_a_message_waiting_at_start_reaches_an_automation(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    # The person has written once (the conversation exists), then Home Assistant was off.
    agent = await start_agent(hass, emulator)
    await human_writes(emulator, agent, text="first")
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    await hass.async_block_till_done()
    waiting = await emulator.send(agent.conversation_id, text="arm the alarm")

    # Home Assistant starts again: integrations and automations are set up first.
    hass.set_state(CoreState.not_running)
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "triggers": {"trigger": "event", "event_type": EVENT_MESSAGE},
                "actions": {
                    "event": "automation_saw",
                    "event_data": {"message_id": "{{ trigger.event.data.message_id }}"},
                },
            }
        },
    )
    seen = async_capture_events(hass, "automation_saw")
    fired = async_capture_events(hass, EVENT_MESSAGE)
    assert await hass.config_entries.async_setup(agent.entry.entry_id)
    await hass.async_block_till_done()
    await asyncio.sleep(1)  # long enough for a connection and a delivery, were one to start
    runtime = agent.entry.runtime_data
    assert runtime.status.state is not ConnectionState.CONNECTED
    assert fired == []  # nothing taken from the relay while automations are not armed

    await hass.async_start()  # arms the automations, then fires homeassistant_started
    await wait_until(lambda: len(seen) == 1)
    assert seen[0].data == {"message_id": waiting}
    assert [event.data["message_id"] for event in fired] == [waiting]


async def test_a_reload_connects_at_once(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await wait_until(lambda: entry.runtime_data.status.state is ConnectionState.CONNECTED)
