"""The agent's device: registered once per config entry, keyed on the entry.

The device and its entities are keyed on the config entry id, not on the Pacerelle agent
id: a reauth after a revocation installs a new agent (a new agent id) into the same entry,
and the device id, the entity ids and so every automation, device trigger and dashboard
that uses them stay as they were.
"""

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.loader import async_get_integration

from .const import CONF_AGENT_NAME, DOMAIN


def agent_name(entry: ConfigEntry) -> str:
    """The agent's name as Home Assistant shows it: the one typed when adding it, else the
    entry's title (the one rule: entities, repairs, actions and the LLM API call it)."""
    return str(entry.data.get(CONF_AGENT_NAME) or entry.title)


def device_identifiers(entry_id: str) -> set[tuple[str, str]]:
    """The identifiers of an entry's device (entities point at it with these only)."""
    return {(DOMAIN, entry_id)}


async def async_register_device(hass: HomeAssistant, entry: ConfigEntry) -> dr.DeviceEntry:
    """Create or update the agent's device; its software version is the integration's."""
    integration = await async_get_integration(hass, DOMAIN)
    registry = dr.async_get(hass)
    device = registry.async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers=device_identifiers(entry.entry_id),
        entry_type=dr.DeviceEntryType.SERVICE,
        manufacturer="Pacerelle",
        model="Agent",
        name=agent_name(entry),
        sw_version=str(integration.version) if integration.version else None,
    )
    async_remove_stale_devices(hass, entry, device.id)
    return device


@callback
def async_remove_stale_devices(hass: HomeAssistant, entry: ConfigEntry, keep: str) -> None:
    """Remove every other device of the entry (one left by an older release's reauth).

    The entity registry removes the entities of a removed device with it.
    """
    registry = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
        if device.id != keep:
            registry.async_remove_device(device.id)
