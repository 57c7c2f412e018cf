"""The Pacerelle integration: Home Assistant as an end-to-end encrypted Pacerelle agent."""

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import ConfigType

from .assist import async_setup_assist_bridge
from .const import CONF_AGENT_ID, DOMAIN
from .device import async_register_device
from .llm_api import async_register_llm_api
from .migration import async_migrate_entry
from .runtime import PacerelleConfigEntry, async_setup_runtime
from .services import async_setup_services
from .store import AgentStore

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)

PLATFORMS = [Platform.EVENT, Platform.NOTIFY, Platform.SENSOR]

__all__ = ["async_migrate_entry"]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the actions and the Pacerelle LLM API once: they reach every loaded agent."""
    async_setup_services(hass)
    async_register_llm_api(hass)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Set up a Pacerelle agent from a config entry: load its store, bring it online."""
    entry.runtime_data = await async_setup_runtime(hass, entry)
    # The device once, here; the platforms' entities point at it by its identifiers.
    await async_register_device(hass, entry)
    async_setup_assist_bridge(hass, entry)
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Unload a Pacerelle agent (the runtime stops through entry.async_on_unload)."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def async_remove_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Delete the agent's encrypted store: its identity, keys and token go with the entry."""
    await AgentStore(hass, entry.data[CONF_AGENT_ID]).async_remove()
