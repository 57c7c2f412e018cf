"""The Pacerelle integration: Home Assistant as an end-to-end encrypted Pacerelle agent."""

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.typing import ConfigType

from .assist.bridge import async_setup_assist_bridge
from .client import native_crypto_unavailable
from .const import CONF_AGENT_ID, DOMAIN
from .conversation_names import async_name_conversations
from .coordinator import async_setup_runtime
from .device import async_follow_subentry_titles, async_register_device
from .group_membership import async_watch_groups
from .issues.blocked_groups import async_watch_blocked_in_groups
from .issues.entry import async_clear_entry_issues
from .issues.groups import async_watch_new_groups
from .llm.api import async_register_llm_api
from .migration import async_migrate_entry
from .runtime import PacerelleConfigEntry
from .services import async_setup_services
from .store.agent_store import agent_store
from .trust import async_remove_trust

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)

PLATFORMS = [Platform.EVENT, Platform.NOTIFY, Platform.SENSOR]
NATIVE_CRYPTO_MISSING = "native_crypto_missing"

__all__ = ["async_migrate_entry"]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the actions and the Pacerelle LLM API once: they reach every loaded agent."""
    async_setup_services(hass)
    async_register_llm_api(hass)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Set up a Pacerelle agent from a config entry: load its store, bring it online."""
    await _async_require_native_crypto(hass)
    entry.runtime_data = await async_setup_runtime(hass, entry)
    await async_name_conversations(hass, entry)
    # The device once, here; the platforms' entities point at it by its identifiers.
    await async_register_device(hass, entry)
    entry.async_on_unload(async_follow_subentry_titles(hass, entry))
    async_setup_assist_bridge(hass, entry)
    async_watch_new_groups(hass, entry)
    async_watch_groups(hass, entry)
    async_watch_blocked_in_groups(hass, entry)
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> bool:
    """Unload a Pacerelle agent (the runtime stops through entry.async_on_unload)."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def async_remove_entry(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Delete the agent's encrypted store: its identity, keys and token go with the entry,
    and so do the trust decisions about the people it talked to, and its repairs."""
    await agent_store(hass, entry.data[CONF_AGENT_ID]).remove()
    await async_remove_trust(hass, entry.entry_id)
    async_clear_entry_issues(hass, entry.entry_id)


async def _async_require_native_crypto(hass: HomeAssistant) -> None:
    """Long-term keys are used only by native constant-time code: without it, stay offline.

    PyNaCl is a requirement of ours (and of default_config), so it is missing only where
    requirements are not installed; a repair issue says what to do (client/signal/native.py).
    """
    missing = await hass.async_add_executor_job(native_crypto_unavailable)
    if missing is None:
        ir.async_delete_issue(hass, DOMAIN, NATIVE_CRYPTO_MISSING)
        return
    placeholders = {"missing": missing}
    ir.async_create_issue(
        hass,
        DOMAIN,
        NATIVE_CRYPTO_MISSING,
        is_fixable=False,
        severity=ir.IssueSeverity.ERROR,
        translation_key=NATIVE_CRYPTO_MISSING,
        translation_placeholders=placeholders,
    )
    raise ConfigEntryError(
        translation_domain=DOMAIN,
        translation_key=NATIVE_CRYPTO_MISSING,
        translation_placeholders=placeholders,
    )
