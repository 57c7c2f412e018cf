"""What every Pacerelle action shares: choosing the agent, and turning failures into messages.

An action names its agent by config entry or by device; with neither, the only loaded agent
is used, unless the call names a conversation by its entity (`entity_id`,
actions/conversation.py): then its agent. Every refusal of the client library becomes a
translated error that says what to do (errors.py, one table); misuse is a
ServiceValidationError, trouble on the way a HomeAssistantError.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import probatio
from homeassistant.const import ATTR_CONFIG_ENTRY_ID, ATTR_DEVICE_ID, ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.service import async_get_config_entry

from ..const import DOMAIN
from ..device import agent_name
from ..errors import action_errors
from ..owner_conversation import owner_conversation_id
from ..runtime import PacerelleConfigEntry
from .conversation import ConversationTarget, conversation_entity, named_conversation

ATTR_MESSAGE_ID: Final = "message_id"
ATTR_SOURCE_MESSAGE_ID: Final = "source_message_id"
ATTR_CONVERSATION_ID: Final = "conversation_id"
ATTR_TO: Final = "to"
ATTR_TO_DEVICE_ID: Final = "to_device_id"
ATTR_WIDGET_ID: Final = "widget_id"

_ONE_AGENT: Final = "config_entry_id and device_id both name the agent: give one of them"
# Fields that pick the agent; every action schema starts from these.
AGENT_FIELDS: Final = {
    probatio.Exclusive(ATTR_CONFIG_ENTRY_ID, "agent", msg=_ONE_AGENT): cv.string,
    probatio.Exclusive(ATTR_DEVICE_ID, "agent", msg=_ONE_AGENT): cv.string,
}
# A conversation, by its entity (a named one) or (advanced) by its id.
CONVERSATION_FIELDS: Final = {
    probatio.Optional(ATTR_ENTITY_ID): cv.entity_ids,
    probatio.Optional(ATTR_CONVERSATION_ID): cv.string,
}
# Where a message goes: an answer to a request, a named conversation, or (advanced) an
# explicit conversation and recipient.
TARGET_FIELDS: Final = {
    probatio.Optional(ATTR_SOURCE_MESSAGE_ID): cv.string,
    **CONVERSATION_FIELDS,
    probatio.Optional(ATTR_TO): cv.string,
    probatio.Optional(ATTR_TO_DEVICE_ID): cv.string,
}


def resolve_entry(hass: HomeAssistant, call: ServiceCall) -> PacerelleConfigEntry:
    """The loaded entry the call names (by entry, device or conversation entity), or the
    only one loaded; a conversation entity of another agent than the one named is refused."""
    device_id = call.data.get(ATTR_DEVICE_ID)
    entry_id = call.data.get(ATTR_CONFIG_ENTRY_ID)
    if device_id is not None:
        device = dr.async_get(hass).async_get(device_id)
        entries = [
            entry
            for entry in hass.config_entries.async_entries(DOMAIN)
            if device is not None and entry.entry_id == device.config_entry_id
        ]
        if not entries:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="unknown_device",
                translation_placeholders={"device_id": device_id},
            )
        entry_id = entries[0].entry_id
    named = named_conversation(hass, call)
    if named is not None:
        if entry_id is not None and entry_id != named.entry_id:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="conversation_other_agent",
                translation_placeholders={"entity_id": ", ".join(call.data[ATTR_ENTITY_ID])},
            )
        entry_id = named.entry_id
    entry: PacerelleConfigEntry = async_get_config_entry(hass, DOMAIN, entry_id)
    return entry


def each_conversation(call: ServiceCall) -> list[ServiceCall]:
    """The call once per conversation entity it names (`target: entity_id: [a, b]`, as Home
    Assistant's entity actions take several), each checked (its agent, its fields) before
    anything is sent; the call itself when it names one or none."""
    entity_ids: list[str] = call.data.get(ATTR_ENTITY_ID) or []
    if len(entity_ids) <= 1:
        calls = [call]
    else:
        calls = [
            ServiceCall(
                call.hass,
                call.domain,
                call.service,
                {**call.data, ATTR_ENTITY_ID: [entity_id]},
                call.context,
                call.return_response,
            )
            for entity_id in dict.fromkeys(entity_ids)
        ]
    for each in calls:
        resolve_entry(each.hass, each)
        target_fields(each)
    return calls


def reached_conversations(call: ServiceCall) -> list[str]:
    """The conversation entities a send reaches: those it names, else its widget's (an
    update), else the owner's; empty when its conversation has no entity."""
    named: list[str] = call.data.get(ATTR_ENTITY_ID) or []
    if named:
        return list(named)
    entry = resolve_entry(call.hass, call)
    conversation_id = owner_conversation_id(entry)
    widget_id = call.data.get(ATTR_WIDGET_ID)
    if widget_id is not None:
        sent = entry.runtime_data.agent.widget(widget_id)
        if sent is None:
            return []
        conversation_id = sent.last.conversation_id
    found = conversation_entity(call.hass, entry, conversation_id)
    return [found] if found else []


def _given(call: ServiceCall, names: tuple[str, ...]) -> list[str]:
    return [name for name in names if call.data.get(name) not in (None, [])]


def _named(call: ServiceCall, *raw: str) -> ConversationTarget | None:
    """The call's conversation entity, refused next to a raw field naming the same thing."""
    named = named_conversation(call.hass, call)
    if named is not None and (both := _given(call, raw)):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="conversation_conflict",
            translation_placeholders={"fields": ", ".join(both)},
        )
    return named


def conversation_field(call: ServiceCall) -> str | None:
    """The conversation a call reads (CONVERSATION_FIELDS): by entity, by id, or None."""
    named = _named(call, ATTR_CONVERSATION_ID)
    if named is not None:
        return named.conversation_id
    conversation_id: str | None = call.data.get(ATTR_CONVERSATION_ID)
    return conversation_id


def target_fields(call: ServiceCall) -> dict[str, Any]:
    """The routing fields of a send, checked for contradictions; a conversation entity
    becomes its conversation id, whom it reaches the client's to say (`to` left out)."""
    data = call.data
    source = data.get(ATTR_SOURCE_MESSAGE_ID)
    explicit = _given(call, (ATTR_ENTITY_ID, ATTR_CONVERSATION_ID, ATTR_TO, ATTR_TO_DEVICE_ID))
    if source is not None and explicit:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="target_conflict",
            translation_placeholders={"fields": ", ".join(explicit)},
        )
    named = _named(call, ATTR_CONVERSATION_ID, ATTR_TO)
    return {
        "source_message_id": source,
        "conversation_id": named.conversation_id if named else data.get(ATTR_CONVERSATION_ID),
        "to": None if named else data.get(ATTR_TO),
        "to_device_id": data.get(ATTR_TO_DEVICE_ID),
    }


@contextmanager
def client_errors(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    message_id: str | None = None,
    *,
    failed: str = "send_failed",
) -> Iterator[None]:
    """Translate the client library's failures for the person who called the action
    (errors.py: one table); `failed`: the action's word for a failure on the way."""
    with action_errors(
        hass, entry, agent_name=agent_name(entry), message_id=message_id, failed=failed
    ):
        yield
