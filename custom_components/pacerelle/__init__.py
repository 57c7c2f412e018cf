"""The Pacerelle integration: Home Assistant as an end-to-end encrypted Pacerelle agent."""

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

type PacerelleConfigEntry = ConfigEntry[None]


async def async_setup_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Set up a Pacerelle agent from a config entry.

    The agent runtime (gateway, tokens, encrypted state) is wired here by the runtime issue.
    """
    return True


async def async_unload_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Unload a Pacerelle agent."""
    return True
