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
"""

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.loader import async_get_integration

from .const import CONF_AGENT_NAME, DOMAIN

MANUFACTURER = "Pacerelle"


def agent_name(entry: ConfigEntry) -> str:
    """The agent's name as Home Assistant shows it: the one typed when adding it, else the
    entry's title (the one rule: entities, repairs, actions and the LLM API call it)."""
    return str(entry.data.get(CONF_AGENT_NAME) or entry.title)


def device_identifiers(entry_id: str) -> set[tuple[str, str]]:
    """The identifiers of an entry's device (entities point at it with these only)."""
    return {(DOMAIN, entry_id)}


def conversation_identifiers(entry_id: str, conversation_id: str) -> set[tuple[str, str]]:
    """The identifiers of a named conversation's device."""
    return {(DOMAIN, f"{entry_id}_conversation_{conversation_id}")}


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


async def async_register_device(hass: HomeAssistant, entry: ConfigEntry) -> dr.DeviceEntry:
    """Create or update the agent's device; its software version is the integration's."""
    integration = await async_get_integration(hass, DOMAIN)
    registry = dr.async_get(hass)
    device = registry.async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers=device_identifiers(entry.entry_id),
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer=MANUFACTURER,
        model="Agent",
        name=agent_name(entry),
        sw_version=str(integration.version) if integration.version else None,
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
