"""The agent's device: registered once per config entry, keyed on the entry.

The device and its entities are keyed on the config entry id, not on the Pacerelle agent
id: a reauth after a revocation installs a new agent (a new agent id) into the same entry,
and the device id, the entity ids and so every automation, device trigger and dashboard
that uses them stay as they were.

Each named conversation (a `conversation` subentry) has a device of its own, made by its
entities (added with the subentry's id, so Home Assistant removes the device with the
subentry and leaves the agent's alone), linked to the agent's device, named as the
subentry. It is keyed on the entry and the conversation: named again after a removal, the
conversation gets its device back with the same id (the registry restores deleted ones).
Renamed (the subentry's title), its device's name follows at once, without a reload: the
registry's `name`, never `name_by_user` (a name the user gave the device wins); entity ids
stay, friendly names follow the device's name (Home Assistant rewrites them).
"""

from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
)
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from .const import CONF_AGENT_NAME, DOMAIN
from .limits import MAX_CONVERSATION_NAME_CHARS

MANUFACTURER = "Pacerelle"


def agent_name(entry: ConfigEntry) -> str:
    """The agent's name as Home Assistant shows it: the one typed when adding it, else the
    entry's title (the one rule: entities, repairs, actions and the LLM API call it)."""
    return str(entry.data.get(CONF_AGENT_NAME) or entry.title)


def conversation_name(title: str) -> str:
    """A named conversation's name as its device and entities show it: its subentry's
    title, which Home Assistant's rename stores as typed, so trimmed and cut to what "Add
    conversation" accepts; a blank one shows as "Conversation"."""
    return title.strip()[:MAX_CONVERSATION_NAME_CHARS].strip() or "Conversation"


def device_identifiers(entry_id: str) -> set[tuple[str, str]]:
    """The identifiers of an entry's device (entities point at it with these only)."""
    return {(DOMAIN, entry_id)}


def conversation_identifiers(entry_id: str, conversation_id: str) -> set[tuple[str, str]]:
    """The identifiers of a named conversation's device."""
    return {(DOMAIN, f"{entry_id}_conversation_{conversation_id}")}


def is_agent_device(device: dr.AnyDeviceEntry) -> bool:
    """Whether `device` is an entry's agent's own device: keyed on the entry alone (not a
    named conversation's device, not another integration's)."""
    entry_id = device.config_entry_id
    return entry_id is not None and device_identifiers(entry_id) <= device.identifiers


def conversation_of(device: dr.AnyDeviceEntry) -> str | None:
    """The conversation a device of ours stands for; None for an agent's device."""
    prefix = f"{device.config_entry_id}_conversation_"
    for domain, identifier in device.identifiers:
        if domain == DOMAIN and identifier.startswith(prefix):
            return identifier.removeprefix(prefix)
    return None


def conversation_device_info(
    hass: HomeAssistant, entry_id: str, conversation_id: str, name: str
) -> DeviceInfo:
    """A named conversation's device, linked to the agent's (registered before it)."""
    info = DeviceInfo(
        identifiers=conversation_identifiers(entry_id, conversation_id),
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer=MANUFACTURER,
        model="Conversation",
        name=name,
    )
    agent = dr.async_get(hass).async_get_device_by_identifier((DOMAIN, entry_id), entry_id)
    if agent is not None:
        info["via_device_id"] = agent.id
    return info


@callback
def async_name_conversation_devices(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Name each named conversation's device after its subentry's current title."""
    registry = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
        subentry = entry.subentries.get(device.config_subentry_id or "")
        if subentry is None or conversation_of(device) is None:
            continue
        name = conversation_name(subentry.title)
        if device.name != name:
            registry.async_update_device(device.id, name=name)


@callback
def async_follow_subentry_titles(hass: HomeAssistant, entry: ConfigEntry) -> CALLBACK_TYPE:
    """Name the devices again whenever the entry changes (a subentry renamed) while it is
    loaded; nothing is reloaded, so the agent's connection stays. Not an update listener:
    the options flow reloads by itself and refuses entries that have one."""

    @callback
    def entry_changed(change: ConfigEntryChange, changed: ConfigEntry) -> None:
        if change is ConfigEntryChange.UPDATED and changed.entry_id == entry.entry_id:
            async_name_conversation_devices(hass, entry)

    return async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, entry_changed)


async def async_register_device(hass: HomeAssistant, entry: ConfigEntry) -> dr.DeviceEntry:
    """Create or update the agent's device.

    No software version: the agent runs no firmware of its own (the integration's version
    is the integration's, shown on its page), and before 0.2.0 it was written here, so it is
    cleared. No configuration URL: the server URL is an API, and Pacerelle publishes no page
    of an agent's settings (it is managed in the Pacerelle app)."""
    registry = dr.async_get(hass)
    device = registry.async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers=device_identifiers(entry.entry_id),
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer=MANUFACTURER,
        model="Agent",
        name=agent_name(entry),
        sw_version=None,
    )
    async_remove_stale_devices(hass, entry, device.id)
    return device


@callback
def async_remove_stale_devices(hass: HomeAssistant, entry: ConfigEntry, keep: str) -> None:
    """Remove every other device of the entry (one left by an older release's reauth) but
    those of its subentries (named conversations: Home Assistant removes each with its
    subentry).

    The entity registry removes the entities of a removed device with it.
    """
    registry = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
        if device.id != keep and device.config_subentry_id is None:
            registry.async_remove_device(device.id)
