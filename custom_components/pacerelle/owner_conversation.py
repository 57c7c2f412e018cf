"""The owner's direct conversation as a `conversation` subentry (named from the start).

The entry's data says which conversation is the owner's (CONF_CONVERSATION_ID, from the
installation; a reauth brings a new one): the owner's subentry is the one that names it,
found by that id and nothing else. Its data is what any named conversation holds (its
conversation id; the agent knows the owner is who it reaches). notify.home and the agent's
device stay the entry's (Home Assistant gives a device to one subentry only, and removes a
subentry's entities and devices with it), so the owner's subentry holds only what is its
own and removing it never takes notify.home, the sensors or the agent's device with it.

Default title "Owner": subentry titles are user data that Home Assistant shows as stored
(not translated) and that the user may rename; a fixed default gives the same names, and
entity ids of the subentry's own entities, in every language and installation.
"""

from types import MappingProxyType

from homeassistant.config_entries import ConfigEntry, ConfigSubentry, ConfigSubentryData
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er

from .const import (
    CONF_CONVERSATION_ID,
    OWNER_CONVERSATION_TITLE,
    SUBENTRY_CONVERSATION,
)


def owner_subentry_data(
    conversation_id: str, title: str = OWNER_CONVERSATION_TITLE
) -> ConfigSubentryData:
    """The owner's subentry as the config flow and the migration create it."""
    return ConfigSubentryData(
        data={CONF_CONVERSATION_ID: conversation_id},
        subentry_type=SUBENTRY_CONVERSATION,
        title=title,
        unique_id=conversation_id,
    )


def owner_conversation_id(entry: ConfigEntry) -> str:
    return str(entry.data[CONF_CONVERSATION_ID])


def is_owner_subentry(entry: ConfigEntry, subentry: ConfigSubentry) -> bool:
    """Whether `subentry` names the entry's owner's direct conversation."""
    return subentry.subentry_type == SUBENTRY_CONVERSATION and str(
        subentry.data[CONF_CONVERSATION_ID]
    ) == owner_conversation_id(entry)


def owner_subentry(entry: ConfigEntry) -> ConfigSubentry | None:
    """The owner's subentry; None once the user removed it."""
    return next((s for s in entry.subentries.values() if is_owner_subentry(entry, s)), None)


@callback
def async_add_owner_subentry(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Name the owner's direct conversation in an entry made before it was (migration)."""
    if owner_subentry(entry) is not None:
        return
    made = owner_subentry_data(owner_conversation_id(entry))
    subentry = ConfigSubentry(
        data=MappingProxyType(dict(made["data"])),
        subentry_type=made["subentry_type"],
        title=made["title"],
        unique_id=made["unique_id"],
    )
    hass.config_entries.async_add_subentry(entry, subentry)


@callback
def async_follow_owner_conversation(
    hass: HomeAssistant, entry: ConfigEntry, conversation_id: str
) -> None:
    """A reauth's new installation has a new direct conversation: the owner's subentry
    (same subentry, same title) names it from now on, and the subentry's own entities and
    devices keyed on the old conversation id are keyed on the new one, so that their
    entity ids and device ids stay (nothing appears as `_2`).

    Called before the entry's data changes (the subentry is found by the old id), after
    the new store replaced the old one: it must not fail. A subentry that names the new
    conversation already is the owner's from then on, and nothing changes.
    """
    subentry = owner_subentry(entry)
    old = owner_conversation_id(entry)
    if subentry is None or conversation_id == old:
        return
    if any(s.unique_id == conversation_id for s in entry.subentries.values()):
        return
    data = {**subentry.data, CONF_CONVERSATION_ID: conversation_id}
    hass.config_entries.async_update_subentry(entry, subentry, data=data, unique_id=conversation_id)
    entities = er.async_get(hass)
    for entity in er.async_entries_for_config_entry(entities, entry.entry_id):
        if entity.config_subentry_id == subentry.subentry_id and old in entity.unique_id:
            new_unique_id = entity.unique_id.replace(old, conversation_id)
            entities.async_update_entity(entity.entity_id, new_unique_id=new_unique_id)
    devices = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(devices, entry.entry_id):
        if device.config_subentry_id != subentry.subentry_id:
            continue
        identifiers = {
            (domain, key.replace(old, conversation_id)) for domain, key in device.identifiers
        }
        if identifiers != device.identifiers:
            devices.async_update_device(device.id, new_identifiers=identifiers)
