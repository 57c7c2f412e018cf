"""Entries, devices and entities written by release 0.1.0 (entry 1.1) are migrated at set-up.

The registries are written here as 0.1.0 wrote them (device identifier and entity unique
ids from the agent id, the agent id as the entry's unique id), including the stale device
an 0.1.0 reauth left behind, with the agent's real store; then the entry is set up against
the emulator.
"""

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import add_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

# (platform, key, entity id) of every entity 0.1.0 registered for an agent named "Home".
ENTITIES = (
    ("sensor", "connection_state", "sensor.home_connection"),
    ("sensor", "pending_requests", "sensor.home_pending_requests"),
    ("sensor", "uncertain_sends", "sensor.home_unconfirmed_sends"),
    ("sensor", "last_message", "sensor.home_last_message"),
    ("sensor", "verification_code", "sensor.home_verification_code"),
    ("event", "messages", "event.home_messages"),
    ("notify", "owner", "notify.home"),
)


def _as_release_0_1_0(
    hass: HomeAssistant, entry: MockConfigEntry, agent_id: str, suffix: str = ""
) -> dr.DeviceEntry:
    """The device and entities 0.1.0 registered for `agent_id` (ids suffixed as HA did)."""
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers={(DOMAIN, agent_id)},
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer="Pacerelle",
        model="Agent",
        name="Home",
    )
    for platform, key, entity_id in ENTITIES:
        er.async_get(hass).async_get_or_create(
            platform,
            DOMAIN,
            f"{agent_id}_{key}",
            suggested_object_id=entity_id.split(".")[1] + suffix,
            config_entry=entry,
            device_id=device.id,
        )
    return device


async def _entry_of_release_0_1_0(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> tuple[MockConfigEntry, str]:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed, minor_version=1)
    hass.config_entries.async_update_entry(entry, unique_id=installed.agent_id)
    return entry, installed.agent_id


async def test_release_0_1_0_registries_are_keyed_on_the_entry(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    entry, agent_id = await _entry_of_release_0_1_0(hass, emulator)
    # An earlier reauth under 0.1.0: the revoked agent's device stayed behind, and the
    # current agent's entities got "_2" ids.
    stale = _as_release_0_1_0(hass, entry, "agt_revoked_long_ago")
    device = _as_release_0_1_0(hass, entry, agent_id, suffix="_2")
    entities = er.async_get(hass)
    assert entities.async_get_entity_id("sensor", DOMAIN, f"{agent_id}_connection_state") == (
        "sensor.home_connection_2"
    )

    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert (entry.version, entry.minor_version) == (1, 3)
    assert entry.unique_id == entry.data["owner_id"]
    # And on to 1.3: the owner's direct conversation is named.
    [owner] = entry.subentries.values()
    assert owner.unique_id == entry.data["conversation_id"]

    devices = dr.async_get(hass)
    kept, owner_device = sorted(
        dr.async_entries_for_config_entry(devices, entry.entry_id),
        key=lambda d: d.identifiers != {(DOMAIN, entry.entry_id)},
    )
    assert owner_device.config_subentry_id == owner.subentry_id
    assert kept.id == device.id  # device triggers and automations on it keep working
    assert kept.identifiers == {(DOMAIN, entry.entry_id)}
    assert devices.async_get(stale.id) is None
    for platform, key, entity_id in ENTITIES:
        # The ids the user's automations use are unchanged; the unique id is the entry's.
        found = entities.async_get_entity_id(platform, DOMAIN, f"{entry.entry_id}_{key}")
        assert found == f"{entity_id}_2"
        assert entities.async_get(entity_id) is None  # the stale device's went with it
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    assert hass.states.get("sensor.home_connection_2").state == "connected"  # type: ignore[union-attr]
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_two_agents_of_one_account_both_migrate(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    first, first_agent = await _entry_of_release_0_1_0(hass, emulator)
    second, second_agent = await _entry_of_release_0_1_0(hass, emulator)
    # Setting up the integration sets up both entries, the first one first.
    assert await hass.config_entries.async_setup(first.entry_id)
    await hass.async_block_till_done()
    assert (first.unique_id, second.unique_id) == ("usr_demo", second_agent)
    assert "belong to the same Pacerelle account" in caplog.text
    for entry in (first, second):
        assert (entry.state, entry.minor_version) == (ConfigEntryState.LOADED, 3)
        await wait_until(lambda e=entry: e.runtime_data.status.state is ConnectionState.CONNECTED)
        assert await hass.config_entries.async_unload(entry.entry_id)
    assert first_agent != second_agent


async def test_an_entry_of_a_newer_major_version_is_not_loaded(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    hass.config_entries.async_update_entry(entry, version=2)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.MIGRATION_ERROR
