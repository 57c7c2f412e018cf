"""What every Pacerelle action shares: choosing the agent, and turning failures into messages.

An action names its agent by config entry or by device; with neither, the only loaded agent
is used. Every refusal of the client library becomes a translated error that says what to
do (errors.py, one table); misuse is a ServiceValidationError, trouble on the way a
HomeAssistantError.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import probatio
from homeassistant.const import ATTR_CONFIG_ENTRY_ID, ATTR_DEVICE_ID
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.service import async_get_config_entry

from ..const import CONF_AGENT_NAME, DOMAIN
from ..errors import action_errors
from ..runtime import PacerelleConfigEntry

ATTR_MESSAGE_ID: Final = "message_id"
ATTR_SOURCE_MESSAGE_ID: Final = "source_message_id"
ATTR_CONVERSATION_ID: Final = "conversation_id"
ATTR_TO: Final = "to"
ATTR_TO_DEVICE_ID: Final = "to_device_id"

# Fields that pick the agent; every action schema starts from these.
AGENT_FIELDS: Final = {
    probatio.Exclusive(ATTR_CONFIG_ENTRY_ID, "agent"): cv.string,
    probatio.Exclusive(ATTR_DEVICE_ID, "agent"): cv.string,
}
# Where a message goes: an answer to a request, or (advanced) an explicit conversation.
TARGET_FIELDS: Final = {
    probatio.Optional(ATTR_SOURCE_MESSAGE_ID): cv.string,
    probatio.Optional(ATTR_CONVERSATION_ID): cv.string,
    probatio.Optional(ATTR_TO): cv.string,
    probatio.Optional(ATTR_TO_DEVICE_ID): cv.string,
}


def agent_name(entry: PacerelleConfigEntry) -> str:
    return str(entry.data.get(CONF_AGENT_NAME) or entry.title)


def resolve_entry(hass: HomeAssistant, call: ServiceCall) -> PacerelleConfigEntry:
    """The loaded entry the call names (by entry or device), or the only one loaded."""
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
    entry: PacerelleConfigEntry = async_get_config_entry(hass, DOMAIN, entry_id)
    return entry


def target_fields(call: ServiceCall) -> dict[str, Any]:
    """The routing fields of a send, checked for contradictions."""
    data = call.data
    source = data.get(ATTR_SOURCE_MESSAGE_ID)
    explicit = [name for name in (ATTR_CONVERSATION_ID, ATTR_TO, ATTR_TO_DEVICE_ID) if name in data]
    if source is not None and explicit:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="target_conflict",
            translation_placeholders={"fields": ", ".join(explicit)},
        )
    return {
        "source_message_id": source,
        "conversation_id": data.get(ATTR_CONVERSATION_ID),
        "to": data.get(ATTR_TO),
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
