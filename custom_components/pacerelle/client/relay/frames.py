"""The gateway's JSON frames: strict parsing of what the relay sends, building what we send.

Every inbound field is checked for type and size first: a frame that does not fit is a
FrameError (logged, skipped), never a crash or an unbounded allocation; server_answers bounds
the JSON's size and nesting. Unknown frame types are ignored, as the protocol says. A `MSG`
that breaks a rule is refused for good: if its id, sender and conversation can be read it is a
RefusedMessage, acknowledged so the relay stops redelivering it. A frame over MAX_FRAME_CHARS
is parsed only with at most MAX_OVERSIZED_VALUES separators and containers, so its parse stays
bounded (gateway.MAX_FRAME_BYTES caps its size).
"""

import base64
import binascii
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeIs

from ..errors import PacerelleResponseError
from ..limits import (
    MAX_ATTACHMENT_TEXT_CHARS,
    MAX_BLOB_BYTES,
    MAX_FRAME_BYTES,
    MAX_FRAME_CHARS,
    MAX_MESSAGE_ATTACHMENTS,
    MAX_OVERSIZED_VALUES,
    MAX_PAYLOAD_BYTES,
    MAX_RELAY_ERROR_CHARS,
    MAX_RELAY_ID_CHARS,
)
from .answers import device_id, parse_json

DEFAULT_DEVICE_ID = "1"
GROUP_PREFIX = "group:"


def group_recipient(conversation_id: str) -> str:
    """The `to` of a message for everyone in a group conversation (PROTOCOL.md)."""
    return GROUP_PREFIX + conversation_id


def is_group_recipient(to: str | None, conversation_id: str) -> bool:
    """Whether `to` addresses the whole group `conversation_id` (the one spelling)."""
    return to == GROUP_PREFIX + conversation_id


_DIGEST_FIELDS = (
    "from",
    "from_device_id",
    "conversation_id",
    "payload_b64",
    "encrypted",
    "to",
    "reply_to_message_id",
    "attachments",
)
_ATTACHMENT_STRINGS = ("id", "name", "mime", "blob_id")
_ATTACHMENT_OPTIONAL = ("sha256", "thumbnail_blob_id")


class FrameError(PacerelleResponseError):
    """A frame from the relay that breaks the protocol; it is skipped."""


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A `MSG` from a human (or a group) to this agent, validated."""

    message_id: str
    conversation_id: str
    sender_id: str
    sender_device_id: str
    to: str
    payload: bytes
    encrypted: bool
    reply_to_message_id: str | None
    attachments: tuple[Mapping[str, Any], ...]
    digest: str
    # When the relay says it took the message (`created_at`), None if it did not say:
    # only ever used to find a message older than it looks (see assist.py), never newer.
    relayed_at: float | None = None

    @property
    def is_group(self) -> bool:
        return is_group_recipient(self.to, self.conversation_id)


@dataclass(frozen=True, slots=True)
class IdentityChanged:
    """`IDENTITY_CHANGED`: a peer's identity key changed (a user or another agent)."""

    peer_id: str
    is_agent: bool


@dataclass(frozen=True, slots=True)
class RelayError:
    """`ERROR`: the relay refused one of our frames (the connection stays open)."""

    error: str
    message_id: str | None


@dataclass(frozen=True, slots=True)
class RefusedMessage:
    """A `MSG` refused for good whose routing fields are readable: to acknowledge, not handle."""

    message_id: str
    conversation_id: str
    sender_id: str
    reason: str
    size: int  # characters of the frame
    oversized: bool = False  # over MAX_FRAME_CHARS (else a field broke a rule)


type InboundFrame = InboundMessage | RefusedMessage | IdentityChanged | RelayError


def parse_frame(text: str) -> InboundFrame | None:
    """The frame in `text`, None for a type we do not know; FrameError if malformed."""
    if len(text) > MAX_FRAME_CHARS:
        return _oversized(text)
    try:
        frame = parse_json(text, "frame", limit=MAX_FRAME_CHARS)
    except PacerelleResponseError as err:
        raise FrameError(str(err)) from None
    if not isinstance(frame, dict):
        raise FrameError("frame is not a JSON object")
    kind = frame.get("type")
    if kind == "MSG":
        try:
            return _message(frame)
        except FrameError as err:
            return _refused(frame, str(err), len(text), err)
    if kind == "IDENTITY_CHANGED":
        return _identity_changed(frame)
    if kind == "ERROR":
        error = frame.get("error")
        message_id = frame.get("message_id")
        return RelayError(
            error[:MAX_RELAY_ERROR_CHARS] if isinstance(error, str) else "unknown error",
            message_id if is_relay_id(message_id) else None,
        )
    return None


def _oversized(text: str) -> RefusedMessage:
    """A `MSG` over MAX_FRAME_CHARS, refused; FrameError if its routing cannot be read."""
    reason = f"frame over {MAX_FRAME_CHARS} characters"
    values = text.count(",") + text.count("[") + text.count("{")
    if len(text) > MAX_FRAME_BYTES or values > MAX_OVERSIZED_VALUES:
        raise FrameError(f"{reason}, unreadable")
    try:
        frame = parse_json(text, "frame", limit=MAX_FRAME_BYTES)
    except PacerelleResponseError as err:
        raise FrameError(f"{reason}: {err}") from None
    if not isinstance(frame, dict) or frame.get("type") != "MSG":
        raise FrameError(f"{reason}, not a message")
    return replace(_refused(frame, reason, len(text), FrameError(reason)), oversized=True)


def _refused(frame: Mapping[str, Any], reason: str, size: int, error: FrameError) -> RefusedMessage:
    """The refused `MSG` to acknowledge; `error` again if its routing fields do not fit."""
    try:
        return RefusedMessage(
            message_id=_id(frame, "id"),
            conversation_id=_id(frame, "conversation_id"),
            sender_id=_id(frame, "from"),
            reason=reason,
            size=size,
        )
    except FrameError:
        raise error from None


def message_digest(frame: Mapping[str, Any]) -> str:
    """SHA-256 over the routing fields and payload (the SDK's receipt digest)."""
    fields = {name: frame.get(name) for name in _DIGEST_FIELDS}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def build_message(
    *,
    message_id: str,
    conversation_id: str,
    to: str,
    payload: bytes,
    encrypted: bool,
    to_device_id: str | None = None,
    reply_to_message_id: str | None = None,
    attachments: list[dict[str, Any]] | None = None,
    history_record: dict[str, Any] | None = None,
) -> str:
    """An outgoing `MSG` frame."""
    frame: dict[str, Any] = {
        "type": "MSG",
        "id": message_id,
        "conversation_id": conversation_id,
        "to": to,
        "payload_b64": base64.b64encode(payload).decode(),
        "encrypted": encrypted,
    }
    if to_device_id is not None:
        frame["to_device_id"] = to_device_id
    if reply_to_message_id is not None:
        frame["reply_to_message_id"] = reply_to_message_id
    if attachments:
        frame["attachments"] = attachments
    if history_record is not None:
        frame["history_record"] = history_record
    return json.dumps(frame, separators=(",", ":"))


def build_ack(message: InboundMessage | RefusedMessage) -> str:
    """`ACK_READ` for a durably accepted message, or one refused for good."""
    return json.dumps(
        {
            "type": "ACK_READ",
            "to": message.sender_id,
            "message_id": message.message_id,
            "conversation_id": message.conversation_id,
        },
        separators=(",", ":"),
    )


def is_relay_id(value: object) -> TypeIs[str]:
    """The one rule of a relay id's validity (messages, conversations, people): a
    printable string of 1 to MAX_RELAY_ID_CHARS characters."""
    return isinstance(value, str) and 0 < len(value) <= MAX_RELAY_ID_CHARS and value.isprintable()


def _id(frame: Mapping[str, Any], name: str) -> str:
    value = frame.get(name)
    if not is_relay_id(value):
        raise FrameError(
            f"`{name}` must be a printable string of 1 to {MAX_RELAY_ID_CHARS} characters"
        )
    return str(value)


def _optional_id(frame: Mapping[str, Any], name: str) -> str | None:
    return None if frame.get(name) is None else _id(frame, name)


def _device_id(frame: Mapping[str, Any]) -> str:
    value = frame.get("from_device_id")
    if value is None:
        return DEFAULT_DEVICE_ID
    try:
        return device_id(value, "from_device_id")
    except PacerelleResponseError as err:
        raise FrameError(str(err)) from None


def _message(frame: Mapping[str, Any]) -> InboundMessage:
    encrypted = frame.get("encrypted")
    if not isinstance(encrypted, bool):
        raise FrameError("`encrypted` must be a boolean")
    raw = frame.get("payload_b64")
    if not isinstance(raw, str) or len(raw) > MAX_PAYLOAD_BYTES * 4 // 3 + 4:
        raise FrameError("`payload_b64` must be a string of bounded size")
    try:
        payload = base64.b64decode(raw, validate=True)
    except binascii.Error as err:
        raise FrameError("`payload_b64` is not base64") from err
    if not payload:
        raise FrameError("`payload_b64` is empty")
    return InboundMessage(
        message_id=_id(frame, "id"),
        conversation_id=_id(frame, "conversation_id"),
        sender_id=_id(frame, "from"),
        sender_device_id=_device_id(frame),
        to=_id(frame, "to"),
        payload=payload,
        encrypted=encrypted,
        reply_to_message_id=_optional_id(frame, "reply_to_message_id"),
        attachments=_attachments(frame.get("attachments")),
        digest=message_digest(frame),
        relayed_at=_relay_time(frame.get("created_at")),
    )


def _relay_time(value: object) -> float | None:
    """The relay's ISO 8601 `created_at` as a POSIX time; None when absent or unusable.

    Not a FrameError: a message without a usable time is still a message; its age is
    then measured from our own receive time only.
    """
    if not isinstance(value, str) or len(value) > MAX_RELAY_ID_CHARS:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    timestamp = moment.timestamp()
    return timestamp if math.isfinite(timestamp) else None


def _attachments(value: object) -> tuple[Mapping[str, Any], ...]:
    """The public attachment descriptors (name and mime are neutral; secrets travel inside)."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_MESSAGE_ATTACHMENTS:
        raise FrameError(
            f"`attachments` must be a list of at most {MAX_MESSAGE_ATTACHMENTS} objects"
        )
    checked: list[Mapping[str, Any]] = []
    for item in value:
        if not isinstance(item, dict):
            raise FrameError("every attachment must be an object")
        public: dict[str, Any] = {}
        for name in _ATTACHMENT_STRINGS:
            public[name] = _text(item, name)
        for name in _ATTACHMENT_OPTIONAL:
            if item.get(name) is not None:
                public[name] = _text(item, name)
        size = item.get("size")
        if type(size) is not int or not 0 <= size <= MAX_BLOB_BYTES:
            raise FrameError(
                f"an attachment's `size` must be an integer from 0 to {MAX_BLOB_BYTES}"
            )
        public["size"] = size
        checked.append(public)
    return tuple(checked)


def _text(item: Mapping[str, Any], name: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ATTACHMENT_TEXT_CHARS:
        raise FrameError(f"an attachment's `{name}` must be a short string")
    return value


def _identity_changed(frame: Mapping[str, Any]) -> IdentityChanged:
    if frame.get("user_id") is not None:
        return IdentityChanged(_id(frame, "user_id"), is_agent=False)
    return IdentityChanged(_id(frame, "agent_id"), is_agent=True)
