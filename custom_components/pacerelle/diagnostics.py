"""Diagnostics of an agent: what helps to debug it, never what protects it.

Built from an allowlist: identifiers, states, counters and times. Never included: the
installation and runtime tokens, any key (identity, prekeys, sessions, history-v1 and group
keys, attachment keys), the Signal state, and what people wrote or the agent answered (text,
widgets, notes, checkpoints): a diagnostics file is meant to be attached to a public issue,
so there is no option to add plaintext. Nor do the agent id, the verification code, or any
Pacerelle id appear (people, conversations, messages, attachments, sessions, also in the
options: the LLM API's conversations): each is replaced by a label (`person_1`,
`conversation_1`, `message_1`, ...) that stays the same within one file, so a reader still
sees who wrote where and what answered what. Ids of this Home Assistant's own parts (the
conversation agent, the voice pipeline, the media folder) name no one and stay. A final
redaction pass (async_redact_data) removes the agent id and the verification code and
catches any secret-looking key that a later field might bring in.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .client import (
    BOUNDS,
    AgentSummary,
    Reply,
    Request,
)
from .const import CONF_CONVERSATION_ID, CONF_OWNER_ID
from .options import CONF_LLM_CONVERSATIONS
from .runtime import PacerelleConfigEntry

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
    "agent_id",
    "verification_code",
}


@dataclass
class Pseudonyms:
    """Stable labels for ids within one diagnostics file: `<kind>_<n>` in order of use."""

    labels: dict[tuple[str, str], str] = field(default_factory=dict)

    def __call__(self, kind: str, value: str | None) -> str | None:
        if value is None:
            return None
        key = (kind, value)
        if key not in self.labels:
            count = sum(1 for known, _ in self.labels if known == kind)
            self.labels[key] = f"{kind}_{count + 1}"
        return self.labels[key]

    def person(self, value: str | None) -> str | None:
        return self("person", value)

    def conversation(self, value: str | None) -> str | None:
        return self("conversation", value)

    def message(self, value: str | None) -> str | None:
        return self("message", value)


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: PacerelleConfigEntry
) -> dict[str, Any]:
    runtime = entry.runtime_data
    status = runtime.status
    data = runtime.agent.summary()
    ids = Pseudonyms()
    entry_data = dict(entry.data)
    entry_data[CONF_OWNER_ID] = ids.person(entry.data.get(CONF_OWNER_ID))
    entry_data[CONF_CONVERSATION_ID] = ids.conversation(entry.data.get(CONF_CONVERSATION_ID))
    diagnostics = {
        "entry": {
            "title": entry.title,
            "data": entry_data,
            "options": _options(entry.options, ids),
        },
        "status": {
            "connection_state": status.state.value,
            "pending_requests": status.pending,
            "uncertain_sends": status.uncertain_sends,
            "queued_sends": status.queued_sends,
            "last_message_at": _time(status.last_message_at),
            "verification_code": status.verification_code,
        },
        "signal": _signal(data, ids),
        "inbox": {
            "pending": [_request(request, ids) for request in data.pending],
            "received_not_handed_over": data.received_not_handed_over,
            "accepted_receipts": data.accepted_receipts,
            "rejected_receipts": data.rejected_receipts,
        },
        "history": {
            "requests": len(data.history.requests),
            "recent_requests": [
                {
                    **_request(handled.request, ids),
                    "processed_at": _time(handled.processed_at),
                    "has_note": handled.note is not None,
                }
                for handled in data.history.requests[-RECENT:]
            ],
            "replies": len(data.history.replies),
            "recent_replies": [_reply(reply, ids) for reply in data.history.replies[-RECENT:]],
        },
        "uncertain_sends": [
            {
                "message_id": ids.message(s.message_id),
                "conversation_id": ids.conversation(s.conversation_id),
                "at": _time(s.at),
            }
            for s in data.uncertain_sends
        ],
        # Sends kept while offline (client/values/send_queue.py): counts and times, never a frame.
        "send_queue": {
            "count": data.queued_sends,
            "bytes": data.queued_bytes,
            "max_count": BOUNDS.queued_sends,
            "max_bytes": BOUNDS.queued_send_bytes,
            "oldest_queued_at": _time(data.oldest_queued_at),
        },
        "checkpoints": data.checkpoints,
        # What was refused or evicted to keep the store loadable (client/store_bounds.py).
        "evictions": dict(data.evictions),
        # Direct messages that did not decrypt since start, per device (issues/decrypt.py).
        "decryption_failures": [
            {
                **counts,
                "sender_id": ids.person(counts["sender_id"]),
                "conversation_id": ids.conversation(counts["conversation_id"]),
                "last_at": _time(counts["last_at"]),
            }
            for counts in runtime.decryption_failures.to_json()
        ],
        # Messages refused for good on arrival and acknowledged (client/relay/refusals.py).
        "refused_messages": {
            **runtime.agent.refusals.to_json(),
            "last_at": _time(runtime.agent.refusals.last_at),
        },
        "conversations": {
            "with_history_key": [
                ids.conversation(conversation) for conversation in data.history_key_conversations
            ],
            "group_keys": data.group_keys,
            # Which device each conversation last wrote from (sorted).
            "last_devices": list(data.last_device_ids),
        },
    }
    return async_redact_data(diagnostics, TO_REDACT)


def _signal(data: AgentSummary, ids: Pseudonyms) -> dict[str, Any]:
    """Which keys exist and how old they are, and which sessions: never the keys."""
    return {
        "device_id": data.device_id,
        "signed_prekey": {
            "id": data.signed_prekey[0],
            "created_at": _time(data.signed_prekey[1]),
        },
        "kyber_prekey": {
            "id": data.kyber_prekey[0],
            "created_at": _time(data.kyber_prekey[1]),
        },
        "retired_prekeys": data.retired_prekeys,
        "one_time_prekeys": data.one_time_prekeys,
        "one_time_prekeys_published": data.one_time_prekeys_published,
        "sessions": {
            ids("session", name): {
                "current_version": session.current_version,
                "archived": session.archived,
            }
            for name, session in data.sessions.items()
        },
    }


def _options(options: Mapping[str, Any], ids: Pseudonyms) -> dict[str, Any]:
    """The entry's options, the Pacerelle conversations among them as labels."""
    shown = dict(options)
    if CONF_LLM_CONVERSATIONS in shown:
        shown[CONF_LLM_CONVERSATIONS] = [
            ids.conversation(str(conversation)) for conversation in shown[CONF_LLM_CONVERSATIONS]
        ]
    return shown


def _request(request: Request, ids: Pseudonyms) -> dict[str, Any]:
    return {
        "message_id": ids.message(request.message_id),
        "conversation_id": ids.conversation(request.conversation_id),
        "sender_id": ids.person(request.sender_id),
        "sender_device_id": request.sender_device_id,
        "group": request.is_group,
        "encrypted": request.encrypted,
        "kind": request.kind,
        "text_length": len(request.text),
        "attachments": [_attachment(item, ids) for item in request.attachments],
        "reply_to_message_id": ids.message(request.reply_to_message_id),
        "received_at": _time(request.received_at),
    }


def _attachment(item: Mapping[str, Any], ids: Pseudonyms) -> dict[str, Any]:
    shown = {name: item[name] for name in ("mime", "size") if name in item}
    return {"id": ids("attachment", str(item["id"])), **shown} if "id" in item else shown


def _reply(reply: Reply, ids: Pseudonyms) -> dict[str, Any]:
    return {
        "message_id": ids.message(reply.message_id),
        "conversation_id": ids.conversation(reply.conversation_id),
        "to": ids.person(reply.to),
        "to_device_id": reply.to_device_id,
        "kind": reply.kind,
        "text_length": len(reply.text),
        "status": reply.status,
        "source_message_id": ids.message(reply.source_message_id),
        "sent_at": _time(reply.sent_at),
    }


def _time(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat()
