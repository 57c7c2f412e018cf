"""A named conversation given to an action by its entity: `entity_id: notify.family`.

The one place an action turns an entity into a conversation: the entity's registry entry
names its config entry and `conversation` subentry (subentry_flow.py), whose data holds the
conversation id and the `to` a message for all of it takes; the send then goes through the
client's one target resolution (`Agent.send_text`), as with a raw `conversation_id`. Any
entity of the subentry names it (its notify entity, which the action's selector offers, or
another of its entities); so does the agent's own notify entity, the owner's direct
conversation. Anything else (an unknown entity, another integration's, a Pacerelle entity
that is no conversation, several at once) is a translated ServiceValidationError.
"""

from dataclasses import dataclass
from typing import Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import ATTR_ENTITY_ID, Platform
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import entity_registry as er

from ..const import (
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from ..entity import NamedConversation, entity_unique_id, named_conversations
from ..owner_conversation import owner_conversation_id

# The key of the agent's own notify entity (notify.py's OWNER description).
OWNER_NOTIFY_KEY: Final = "owner"


@dataclass(frozen=True, slots=True)
class ConversationTarget:
    """Where an entity's conversation is: its agent's entry and its id."""

    entry_id: str
    conversation_id: str


def named_conversation(hass: HomeAssistant, call: ServiceCall) -> ConversationTarget | None:
    """The conversation of the call's `entity_id` (None when it names none)."""
    entity_ids: list[str] = call.data.get(ATTR_ENTITY_ID) or []
    if not entity_ids:
        return None
    if len(entity_ids) > 1:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="one_conversation",
            translation_placeholders={"entity_ids": ", ".join(entity_ids)},
        )
    (entity_id,) = entity_ids
    found = _conversation_of(hass, entity_id)
    if found is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="not_a_conversation",
            translation_placeholders={"entity_id": entity_id},
        )
    return found


def _conversation_of(hass: HomeAssistant, entity_id: str) -> ConversationTarget | None:
    entity = er.async_get(hass).async_get(entity_id)
    if entity is None or entity.platform != DOMAIN or entity.config_entry_id is None:
        return None
    entry = hass.config_entries.async_get_entry(entity.config_entry_id)
    if entry is None or entry.domain != DOMAIN:
        return None
    if entity.config_subentry_id is not None:
        subentry = entry.subentries.get(entity.config_subentry_id)
        if subentry is None or subentry.subentry_type != SUBENTRY_CONVERSATION:
            return None
        named = NamedConversation.of(entry, subentry)  # the one reading of a subentry's data
        return ConversationTarget(entry.entry_id, named.conversation_id)
    owner = entity_unique_id(entry.entry_id, OWNER_NOTIFY_KEY)
    if entity.domain == Platform.NOTIFY and entity.unique_id == owner:
        return ConversationTarget(entry.entry_id, owner_conversation_id(entry))
    return None


def conversation_entity(
    hass: HomeAssistant, entry: ConfigEntry, conversation_id: str
) -> str | None:
    """The notify entity that names the conversation (the owner's, or a named one's), if any:
    the inverse of `named_conversation`."""
    if conversation_id == owner_conversation_id(entry):
        key = OWNER_NOTIFY_KEY
    else:
        named = [c for c in named_conversations(entry) if c.conversation_id == conversation_id]
        if not named:
            return None
        key = named[0].key()
    return er.async_get(hass).async_get_entity_id(
        Platform.NOTIFY, DOMAIN, entity_unique_id(entry.entry_id, key)
    )
