"""Actions about what arrived: mark_processed, get_history, get_status, download_attachment."""

from datetime import UTC, datetime
from typing import Any, Final

import probatio
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv

from ..client import BOUNDS
from ..const import CONF_AGENT_ID, DOMAIN
from ..device import agent_name
from ..events import event_data
from ..files.attachments import async_allowed_folder, async_save, target_of
from ..runtime import PacerelleConfigEntry
from .common import (
    AGENT_FIELDS,
    ATTR_MESSAGE_ID,
    CONVERSATION_FIELDS,
    client_errors,
    conversation_field,
    resolve_entry,
)

ATTR_NOTE: Final = "note"
ATTR_LIMIT: Final = "limit"
ATTR_ATTACHMENT_ID: Final = "attachment_id"
ATTR_FOLDER: Final = "folder"

MARK_PROCESSED_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Required(ATTR_MESSAGE_ID): cv.string,
        # The length is checked by the action, for a message that says what the limit is.
        probatio.Optional(ATTR_NOTE): cv.string,
    }
)
GET_HISTORY_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        **CONVERSATION_FIELDS,
        probatio.Optional(ATTR_LIMIT, default=BOUNDS.history_entries): probatio.All(
            probatio.Coerce(int), probatio.Range(min=1, max=BOUNDS.history_entries)
        ),
    }
)
GET_STATUS_SCHEMA: Final = probatio.Schema(AGENT_FIELDS)
DOWNLOAD_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Required(ATTR_MESSAGE_ID): cv.string,
        probatio.Optional(ATTR_ATTACHMENT_ID): cv.string,
        probatio.Required(ATTR_FOLDER): cv.string,
    }
)


def _iso(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).isoformat()


def _unknown_message(entry: PacerelleConfigEntry, message_id: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key="unknown_message",
        translation_placeholders={"message_id": message_id, "agent_name": agent_name(entry)},
    )


async def async_mark_processed(call: ServiceCall) -> None:
    entry = resolve_entry(call.hass, call)
    message_id: str = call.data[ATTR_MESSAGE_ID]
    note: str | None = call.data.get(ATTR_NOTE)
    if note is not None and len(note) > BOUNDS.note_chars:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="note_too_long",
            translation_placeholders={"limit": str(BOUNDS.note_chars), "length": str(len(note))},
        )
    if entry.runtime_data.agent.find_request(message_id) is None:
        raise _unknown_message(entry, message_id)
    with client_errors(call.hass, entry, message_id):
        await entry.runtime_data.agent.mark_processed(message_id, note)


async def async_get_history(call: ServiceCall) -> ServiceResponse:
    """Recent requests (no file keys) and replies, oldest first."""
    entry = resolve_entry(call.hass, call)
    runtime = entry.runtime_data
    agent_id = str(entry.data[CONF_AGENT_ID])
    history = runtime.agent.history(conversation_field(call), call.data[ATTR_LIMIT])
    pending = {request.message_id for request in runtime.agent.pending_requests()}
    return {
        "requests": [
            {
                **event_data(entry.entry_id, agent_id, item.request),
                "pending": item.request.message_id in pending,
                "processed_at": _iso(item.processed_at),
                "note": item.note,
            }
            for item in history.requests
        ],
        "replies": [
            {**reply.to_json(), "sent_at": _iso(reply.sent_at)} for reply in history.replies
        ],
    }


async def async_get_status(call: ServiceCall) -> ServiceResponse:
    entry = resolve_entry(call.hass, call)
    agent = entry.runtime_data.agent
    status = agent.status
    agent_id = str(entry.data[CONF_AGENT_ID])
    return {
        "state": status.state.value,
        "pending": status.pending,
        "uncertain_sends": status.uncertain_sends,
        "queued_sends": status.queued_sends,
        "verification_code": status.verification_code,
        "last_message_at": _iso(status.last_message_at),
        "pending_requests": [
            event_data(entry.entry_id, agent_id, request) for request in agent.pending_requests()
        ],
    }


async def async_download_attachment(call: ServiceCall) -> ServiceResponse:
    """Decrypt a request's files (one, or all) into an allowed folder; where they went."""
    hass = call.hass
    entry = resolve_entry(hass, call)
    message_id: str = call.data[ATTR_MESSAGE_ID]
    folder = await async_allowed_folder(hass, call.data[ATTR_FOLDER])
    agent = entry.runtime_data.agent
    request = agent.find_request(message_id)
    if request is None:
        raise _unknown_message(entry, message_id)
    wanted = call.data.get(ATTR_ATTACHMENT_ID)
    items = [
        (index, item)
        for index, item in enumerate(request.attachments)
        if wanted is None or item.get("id") == wanted
    ]
    if not items:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_attachment" if wanted else "no_attachments",
            translation_placeholders={"message_id": message_id, "attachment_id": wanted or ""},
        )
    files: list[Any] = []
    for index, item in items:
        # Numbered as in the message, so a fallback name is the same as in the media folder.
        target = target_of(folder, item, index, None)
        path = await async_save(hass, target, await _download(hass, entry, message_id, index))
        files.append({**item, "path": path})  # the client hands over only public fields
    return {"message_id": message_id, "files": files}


async def _download(
    hass: HomeAssistant, entry: PacerelleConfigEntry, message_id: str, index: int
) -> bytes:
    """The file, checked and decrypted by the client, or a translated error saying why not
    (errors.py)."""
    with client_errors(hass, entry, message_id, failed="download_failed"):
        return await entry.runtime_data.agent.download(message_id, index)
