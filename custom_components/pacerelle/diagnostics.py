"""Diagnostics of an agent: what helps to debug it, never what protects it.

Built from an allowlist: identifiers, states, counters and times. Never included: the
installation and runtime tokens, any key (identity, prekeys, sessions, history-v1 and group
keys, attachment keys), the Signal state, and what people wrote or the agent answered (text,
widgets, notes, checkpoints): a diagnostics file is meant to be attached to a public issue,
so there is no option to add plaintext. A final redaction pass catches any secret-looking
key that a later field might bring in.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from . import PacerelleConfigEntry
from .client.agent_data import AgentData
from .client.history import Reply
from .client.inbox import Request
from .client.signal.state import AgentSignalState

RECENT: Final = 20  # the newest requests and replies listed
TO_REDACT: Final = {
    "token",
    "installation_token",
    "agent_token",
    "key",
    "key_b64",
    "iv_b64",
    "raw_key_b64",
    "envelope_b64",
    "private",
    "secret",
    "text",
    "note",
    "summary",
    "next_action",
    "widget",
}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: PacerelleConfigEntry
) -> dict[str, Any]:
    runtime = entry.runtime_data
    status = runtime.status
    data = runtime.agent.data
    diagnostics = {
        "entry": {
            "title": entry.title,
            "data": dict(entry.data),
            "options": dict(entry.options),
        },
        "status": {
            "connection_state": status.state.value,
            "pending_requests": status.pending,
            "uncertain_sends": status.uncertain_sends,
            "last_message_at": _time(status.last_message_at),
            "verification_code": status.verification_code,
        },
        "signal": _signal(data.signal, data),
        "inbox": {
            "pending": [_request(request) for request in data.inbox.pending.values()],
            "received_not_handed_over": len(data.inbox.received),
            "accepted_receipts": len(data.inbox.accepted),
            "rejected_receipts": len(data.inbox.rejected),
        },
        "history": {
            "requests": len(data.history.requests),
            "recent_requests": [
                {
                    **_request(handled.request),
                    "processed_at": _time(handled.processed_at),
                    "has_note": handled.note is not None,
                }
                for handled in data.history.requests[-RECENT:]
            ],
            "replies": len(data.history.replies),
            "recent_replies": [_reply(reply) for reply in data.history.replies[-RECENT:]],
        },
        "uncertain_sends": [
            {"message_id": s.message_id, "conversation_id": s.conversation_id, "at": _time(s.at)}
            for s in data.uncertain
        ],
        "checkpoints": len(data.checkpoints.items),
        "conversations": {
            "with_history_key": sorted(data.conversations.history_keys),
            "group_keys": len(data.conversations.group_keys),
            "last_devices": dict(data.conversations.last_devices),
        },
    }
    return async_redact_data(diagnostics, TO_REDACT)


def _signal(state: AgentSignalState, data: AgentData) -> dict[str, Any]:
    """Which keys exist and how old they are, and which sessions: never the keys."""
    prekeys = state.prekeys
    return {
        "device_id": prekeys.device_id,
        "signed_prekey": {
            "id": prekeys.signed_prekey.prekey_id,
            "created_at": _time(prekeys.signed_prekey.created_at),
        },
        "kyber_prekey": {
            "id": prekeys.kyber_prekey.prekey_id,
            "created_at": _time(prekeys.kyber_prekey.created_at),
        },
        "retired_prekeys": len(prekeys.retired),
        "one_time_prekeys": len(prekeys.one_time_prekeys),
        "one_time_prekeys_published": len(data.published_prekeys),
        "sessions": {
            name: {
                "current_version": record.current.version if record.current else None,
                "archived": len(record.previous),
            }
            for name, record in state.sessions.items()
        },
    }


def _request(request: Request) -> dict[str, Any]:
    return {
        "message_id": request.message_id,
        "conversation_id": request.conversation_id,
        "sender_id": request.sender_id,
        "sender_device_id": request.sender_device_id,
        "group": request.is_group,
        "encrypted": request.encrypted,
        "kind": request.kind,
        "text_length": len(request.text),
        "attachments": [_attachment(item) for item in request.attachments],
        "reply_to_message_id": request.reply_to_message_id,
        "received_at": _time(request.received_at),
    }


def _attachment(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in ("id", "mime", "size") if name in item}


def _reply(reply: Reply) -> dict[str, Any]:
    return {
        "message_id": reply.message_id,
        "conversation_id": reply.conversation_id,
        "to": reply.to,
        "to_device_id": reply.to_device_id,
        "kind": reply.kind,
        "text_length": len(reply.text),
        "status": reply.status,
        "source_message_id": reply.source_message_id,
        "sent_at": _time(reply.sent_at),
    }


def _time(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat()
