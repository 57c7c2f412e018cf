"""An entry 1.2 (release 0.2's) migrates to 1.3: the owner's direct conversation becomes a
subentry, and nothing the user's automations name changes.

The entry is the one the migration tests use (add_entry at 1.2: no subentry); the device
and the entities are registered as 1.2 registered them (keyed on the entry, none of them a
subentry's), one of them renamed by the user. Then the entry is set up against the emulator.
"""

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.events import EVENT_MESSAGE
from tests.helpers.agent import Agent, add_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes, received

# (platform, key, entity id) of the entities 1.2 registered for an agent named "Home".
ENTITIES = (
    ("sensor", "connection_state", "sensor.home_connection"),
    ("sensor", "pending_requests", "sensor.home_pending_requests"),
    ("sensor", "uncertain_sends", "sensor.home_unconfirmed_sends"),
    ("sensor", "queued_sends", "sensor.home_queued_sends"),
    ("sensor", "last_message", "sensor.home_last_message"),
    ("sensor", "verification_code", "sensor.home_code"),
    ("sensor", "decryption_failures", "sensor.home_undecryptable_messages"),
    ("event", "messages", "event.home_messages"),
    ("notify", "owner", "notify.home"),
)
RENAMED = "notify.my_phone"  # the user renamed notify.home; automations use that name


def _as_release_1_2(hass: HomeAssistant, entry: MockConfigEntry) -> dr.DeviceEntry:
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers={(DOMAIN, entry.entry_id)},
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer="Pacerelle",
        model="Agent",
        name="Home",
    )
    entities = er.async_get(hass)
    for platform, key, entity_id in ENTITIES:
        entities.async_get_or_create(
            platform,
            DOMAIN,
            f"{entry.entry_id}_{key}",
            suggested_object_id=entity_id.split(".")[1],
            config_entry=entry,
            device_id=device.id,
        )
    entities.async_update_entity("notify.home", new_entity_id=RENAMED)
    return device


def _registered(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, tuple[object, ...]]:
    """Each entity of the entry by unique id: what an automation or a dashboard keys on."""
    return {
        e.unique_id: (e.entity_id, e.device_id, e.config_subentry_id, e.disabled_by)
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    }


async def test_a_1_2_entry_gets_the_owners_subentry_with_every_id_unchanged(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed, minor_version=2)
    assert not entry.subentries
    device = _as_release_1_2(hass, entry)
    before = _registered(hass, entry)
    assert len(before) == len(ENTITIES)
    unique_id = entry.unique_id
    agent = Agent(installed, entry, async_capture_events(hass, EVENT_MESSAGE))

    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert (entry.version, entry.minor_version) == (1, 3)
    [owner] = entry.subentries.values()
    assert (owner.subentry_type, owner.title, owner.unique_id) == (
        "conversation",
        "Owner",
        installed.conversation_id,
    )
    assert dict(owner.data) == {"conversation_id": installed.conversation_id}
    assert entry.unique_id == unique_id

    # Every entity 1.2 registered is as it was: same entity id (the renamed one too), same
    # unique id, same device, still the entry's and not the subentry's.
    after = _registered(hass, entry)
    assert {uid: after.get(uid) for uid in before} == before
    entry_level = {uid: v for uid, v in after.items() if v[2] is None}
    assert not [v[0] for v in entry_level.values() if str(v[0]).endswith("_2")]
    devices = dr.async_get(hass)
    kept = devices.async_get(device.id)
    assert kept is not None
    assert (kept.identifiers, kept.config_entry_id, kept.config_subentry_id) == (
        {(DOMAIN, entry.entry_id)},
        entry.entry_id,
        None,
    )
    assert devices.async_get_device_by_identifier((DOMAIN, entry.entry_id), entry.entry_id) == kept

    # The renamed notify still reaches the owner's phone.
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await human_writes(emulator, agent, text="hello")
    data = {ATTR_ENTITY_ID: RENAMED, "message": "Still me"}
    await hass.services.async_call("notify", "send_message", data, blocking=True)
    (reply,) = await received(emulator, agent, 1)
    assert reply["text"] == "Still me"

    # A second set-up migrates nothing again.
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert list(entry.subentries.values()) == [owner]
    assert _registered(hass, entry) == after
    assert await hass.config_entries.async_unload(entry.entry_id)
