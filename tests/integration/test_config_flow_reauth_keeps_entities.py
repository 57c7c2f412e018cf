"""A reconnection after a revocation keeps the device, the entities and the automations.

Everything runs for real: the config flow through Home Assistant's flow API and OAuth2
callback view, the emulator as Pacerelle (revocation, a new approval, messages from the
human's device), and an automation with a device trigger made before the reauth.
"""

from typing import Any

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.device_triggers import FIRED, automate, on_trigger
from tests.helpers.runtime import wait_until

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


def _registered(hass: HomeAssistant, entry: ConfigEntry) -> tuple[set[str], dict[str, str]]:
    """The entry's device ids, and its entities' ids by unique id (disabled ones included)."""
    devices = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    return {device.id for device in devices}, {e.unique_id: e.entity_id for e in entities}


async def _revoke(hass: HomeAssistant, driver: FlowDriver, entry: ConfigEntry) -> str:
    """Revoked in Pacerelle: the agent meets the refusal and reauth starts; its flow id."""
    await driver.emulator.admin("POST", f"/installations/{entry.data['agent_id']}/revoke")
    await wait_until(lambda: bool(hass.config_entries.flow.async_progress_by_handler(DOMAIN)))
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == SOURCE_REAUTH
    return str(flow["flow_id"])


async def _reauth(driver: FlowDriver, flow_id: str, user_id: str | None = None) -> dict[str, Any]:
    key = await driver.emulator.connect_key(user_id)
    external = await driver.submit(flow_id, {"connection_key": key})
    await driver.come_back(await driver.answer(external))
    return await driver.fetch(flow_id)


async def test_reauth_keeps_device_entities_and_device_triggers(
    hass: HomeAssistant, notify_ready: None, driver: FlowDriver
) -> None:
    assert (await driver.install(agent_name="Home"))["type"] == "create_entry"
    await hass.async_block_till_done()
    [entry] = hass.config_entries.async_entries(DOMAIN)
    old_agent_id = entry.data["agent_id"]
    devices, entities = _registered(hass, entry)
    [agent_device] = dr.async_get(hass).async_get_devices(identifiers={(DOMAIN, entry.entry_id)})
    device_id = agent_device.id
    assert len(devices) == 2  # the agent's and its owner's conversation's ("Owner")
    # Among them the ones automations use most (all are compared after the reauth).
    assert {
        "event.home_messages",
        "event.owner_messages",
        "notify.home",
        "sensor.owner_members",
        "sensor.home_connection",
        "sensor.home_last_message",
        "sensor.home_pending_requests",
        "sensor.home_unconfirmed_sends",
        "sensor.home_code",
    } <= set(entities.values())
    # An automation made with the editor's device trigger "a message is received".
    text = {"text": "{{ trigger.event.data.text }}"}
    await automate(hass, [on_trigger(device_id, "message_received", text)])
    fired = async_capture_events(hass, FIRED)

    flow_id = await _revoke(hass, driver, entry)
    result = await _reauth(driver, flow_id)
    assert (result["type"], result["reason"]) == ("abort", "reauth_successful")
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    new_agent_id = entry.data["agent_id"]
    assert new_agent_id != old_agent_id

    # The same device (same id) and the same entity ids; nothing left behind, nothing new.
    # (The owner's conversation's entities are keyed on its conversation id, which the
    # reauth changed: re-keyed, their entity ids stay; owner_conversation.py.)
    devices_after, entities_after = _registered(hass, entry)
    assert devices_after == devices
    assert sorted(entities_after.values()) == sorted(entities.values())
    assert {k: v for k, v in entities_after.items() if "_conversation_" not in k} == {
        k: v for k, v in entities.items() if "_conversation_" not in k
    }
    assert all(not entity_id.endswith("_2") for entity_id in hass.states.async_entity_ids())
    assert dr.async_get(hass).async_get_devices(identifiers={(DOMAIN, old_agent_id)}) == []
    assert entry.unique_id == entry.data["owner_id"]
    assert not await agent_store(hass, old_agent_id).exists()

    # The automation made before the reauth runs on a message to the new agent.
    await wait_until(lambda: entry.runtime_data.status.state is ConnectionState.CONNECTED)
    await driver.emulator.send(entry.data["conversation_id"], text="Back again")
    await wait_until(lambda: len(fired) == 1)
    assert fired[0].data == {"text": "Back again"}
    assert hass.states.get("sensor.home_connection").state == "connected"  # type: ignore[union-attr]
