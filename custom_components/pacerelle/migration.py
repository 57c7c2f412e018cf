"""Config entry migrations, with the device and entity registries they key.

1.1 -> 1.2: release 0.1.0 keyed the device and the entities on the agent id, which a
reauth replaces, and used the agent id as the entry's unique id. From 1.2 the device
identifier is the entry id, entity unique ids are `<entry id>_<key>` (so the device id and
every entity id survive a reauth), and the entry's unique id is the owner's account id
(the identity that a reauth must keep). Two 1.1 entries of the same account (which 0.1.0
allowed) cannot share that unique id: the first migrated takes it, the other keeps its
agent id as unique id and works as before. Devices that an older reauth left behind are
removed at set-up (device.py).

1.2 -> 1.3: the owner's direct conversation becomes a `conversation` subentry, as a new
entry has it (owner_conversation.py). Nothing else moves: notify.home, the sensors and the
agent's device keep their ids and unique ids and stay the entry's, not the subentry's.
"""

import logging

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er

from .const import CONF_AGENT_ID, CONF_OWNER_ID, DOMAIN, ENTRY_VERSION
from .device import device_identifiers
from .entity import entity_unique_id
from .owner_conversation import async_add_owner_subentry

_LOGGER = logging.getLogger(__name__)


async def async_migrate_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Bring an entry to ENTRY_VERSION.ENTRY_MINOR_VERSION.

    Home Assistant itself refuses an entry of a newer major version (a downgrade) before
    calling this, and a newer minor version is compatible by its convention.
    """
    if entry.version == ENTRY_VERSION and entry.minor_version < 2:
        await _async_key_on_entry(hass, entry)
        hass.config_entries.async_update_entry(
            entry, unique_id=_account_unique_id(hass, entry), minor_version=2
        )
        _LOGGER.debug("Migrated entry %s to 1.2 (device and entities keyed on it)", entry.title)
    if entry.version == ENTRY_VERSION and entry.minor_version < 3:
        async_add_owner_subentry(hass, entry)
        hass.config_entries.async_update_entry(entry, minor_version=3)
        _LOGGER.debug("Migrated entry %s to 1.3 (the owner's conversation named)", entry.title)
    return True


async def _async_key_on_entry(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Move the device's identifier and the entities' unique ids from the agent to the entry."""
    agent_id = str(entry.data[CONF_AGENT_ID])
    devices = dr.async_get(hass)
    device = devices.async_get_device_by_identifier((DOMAIN, agent_id), entry.entry_id)
    if device is not None:
        devices.async_update_device(device.id, new_identifiers=device_identifiers(entry.entry_id))
    prefix = f"{agent_id}_"

    @callback
    def rekey(entity: er.RegistryEntry) -> dict[str, str] | None:
        if not entity.unique_id.startswith(prefix):
            return None
        key = entity.unique_id.removeprefix(prefix)
        return {"new_unique_id": entity_unique_id(entry.entry_id, key)}

    await er.async_migrate_entries(hass, entry.entry_id, rekey)


def _account_unique_id(hass: HomeAssistant, entry: ConfigEntry) -> str | None:
    owner_id = str(entry.data[CONF_OWNER_ID])
    taken = hass.config_entries.async_entry_for_domain_unique_id(DOMAIN, owner_id)
    if taken is not None and taken.entry_id != entry.entry_id:
        _LOGGER.warning(
            "Agents %s and %s belong to the same Pacerelle account; %s keeps its old unique id",
            taken.title,
            entry.title,
            entry.title,
        )
        return entry.unique_id
    return owner_id
