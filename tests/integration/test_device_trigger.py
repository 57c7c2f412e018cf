"""Device triggers: offered for an agent's device, running automations from real messages."""

from homeassistant.components.device_automation import (
    DeviceAutomationType,
    async_get_device_automations,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.device_trigger import async_get_trigger_capabilities
from tests.helpers.agent import start_agent
from tests.helpers.device_triggers import FIRED, automate, on_trigger
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes


async def test_the_editor_offers_both_triggers(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    device_id = agent.device_id(hass)
    found = await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, [device_id])
    # The agent's entities add their own (sensor, event) triggers; ours are the domain's.
    ours = [trigger for trigger in found[device_id] if trigger["domain"] == DOMAIN]
    assert sorted(trigger["type"] for trigger in ours) == ["message_received", "widget_answered"]
    other = MockConfigEntry(domain="other")
    other.add_to_hass(hass)
    lamp = dr.async_get(hass).async_get_or_create(
        config_entry_id=other.entry_id, identifiers={("other", "lamp")}
    )
    found = await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, [lamp.id])
    assert not [trigger for trigger in found[lamp.id] if trigger["domain"] == DOMAIN]


async def test_triggers_run_automations(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    device_id = agent.device_id(hass)
    fired = async_capture_events(hass, FIRED)
    await automate(
        hass,
        (
            on_trigger(
                device_id,
                trigger_type,
                {
                    "type": trigger_type,
                    "message_id": "{{ trigger.event.data.message_id }}",
                    "detail": detail,
                },
            )
            for trigger_type, detail in (
                ("message_received", "{{ trigger.event.data.text }}"),
                ("widget_answered", "{{ trigger.event.data.widget_id }}"),
            )
        ),
    )
    message = await human_writes(emulator, agent, text="Lights off please")
    await wait_until(lambda: len(fired) == 1)
    assert fired[0].data == {
        "type": "message_received",
        "message_id": message["message_id"],
        "detail": "Lights off please",
    }
    answer = await human_writes(emulator, agent, widget_response={"ref": "w-9", "value": 3})
    await wait_until(lambda: len(fired) == 2)
    await hass.async_block_till_done()
    # The answer fires its own trigger only, not "a message is received".
    assert [event.data for event in fired[1:]] == [
        {"type": "widget_answered", "message_id": answer["message_id"], "detail": "w-9"}
    ]


async def test_from_a_trusted_device_only(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    # the owner's device 1: trusted on first use
    agent = await start_agent(hass, emulator, spoken=True)
    device_id = agent.device_id(hass)
    config = {"domain": DOMAIN, "device_id": device_id}
    capabilities = await async_get_trigger_capabilities(
        hass, {**config, "platform": "device", "type": "message_received"}
    )
    # An automation made in the editor gets the filter on unless the user turns it off.
    assert capabilities["extra_fields"]({}) == {"trusted_only": True}

    fired = async_capture_events(hass, FIRED)
    text = {"text": "{{ trigger.event.data.text }}"}
    await automate(hass, [on_trigger(device_id, "message_received", text, trusted_only=True)])
    # A device the relay announces for the owner, unverified: it does not trigger.
    await human_writes(emulator, agent, text="open the garage", device_id="2")
    await human_writes(emulator, agent, text="close the garage")
    await wait_until(lambda: len(fired) == 1)
    assert [event.data["text"] for event in fired] == ["close the garage"]
