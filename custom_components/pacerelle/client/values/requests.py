"""The inbox: what happened to each incoming message, so none is lost or handled twice.

A message moves received (stored, not handed over) -> accepted (handed over; ACK_READ due) and
stays pending until marked processed. Receipts key on the id plus a digest of the routing
fields and payload: same digest is a redelivery, a different one a conflict. Immutable: every
change returns a new Inbox, so a failed save rolls back by keeping the old one.
A group message has no ratchet, so it would open again under a new id: per group key the
inbox keeps the IVs of the messages it took or sent (`GroupSeal`), and a known seal is refused
as a replay (also the agent's own message reflected back "from" a member). A key's seals live
as long as the key and cover its last MAX_SEALS_PER_KEY messages, so a flooding sender fills
only his own window; all together within MAX_GROUP_SEALS (group_key_bounds.py rule 3).
Stored as `group_seals: {key name: [IV base64, ...]}`, oldest first; an older store's global
digests load as `legacy_seals`, still refused, never grown.
"""

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final, NamedTuple

from ..errors import PacerelleError
from ..limits import (
    MAX_ACCEPTED_RECEIPTS,
    MAX_PENDING,
    MAX_REJECTED_RECEIPTS,
    MAX_REQUEST_BYTES,
    MAX_SEALS_PER_KEY,
)
from ..relay.frames import InboundMessage, is_group_recipient
from .groups import parse_message
from .payloads import CHAT_MESSAGE, PLAIN_TEXT, Content, public_attachment
from .trust_book import DeviceTrust, TrustState
from .widget_answers import WidgetResponse, parse_response
from .widgets import WIDGET_RESPONSE

CHAT_KINDS: Final = frozenset({PLAIN_TEXT, CHAT_MESSAGE})  # what a person writes

__all__ = ["MAX_ACCEPTED_RECEIPTS", "MAX_PENDING", "MAX_REJECTED_RECEIPTS"]


class GroupSeal(NamedTuple):
    """What makes a group message unique: its key's name and its IV (base64)."""

    key_name: str
    iv: str

    @property
    def digest(self) -> str:
        """The form stores from before kept (one global list)."""
        raw = base64.b64decode(self.iv)
        return hashlib.sha256(self.key_name.encode() + b"\0" + raw).hexdigest()[:32]


class RequestTooLargeError(PacerelleError):
    """A request bigger, as stored, than MAX_REQUEST_BYTES: refused, never kept."""


class Receipt(StrEnum):
    """How an incoming message relates to what we already hold."""

    NEW = "new"
    RECEIVED = "received"  # decrypted before: hand over the stored copy
    ACCEPTED = "accepted"  # handed over before: acknowledge again only
    REJECTED = "rejected"  # refused for good before: acknowledge again only
    CONFLICT = "conflict"  # known id, different digest: an error, never handed over


@dataclass(frozen=True, slots=True)
class Request:
    """A decrypted request, as stored and as handed to Home Assistant."""

    message_id: str
    conversation_id: str
    sender_id: str
    sender_device_id: str
    to: str
    encrypted: bool
    kind: str
    text: str
    reply_to_message_id: str | None
    received_at: float
    attachments: tuple[Mapping[str, Any], ...] = ()
    widget: Mapping[str, Any] | None = None
    # The relay's time for it (may lie; see InboundMessage.relayed_at), None if unknown.
    relayed_at: float | None = None
    # A group message: the name of the group key it opened with (whose sender the trust
    # judge believes, trust.py); None for a direct one.
    group_key: str | None = None
    # The one trust judgement (trust/door.py), made when the request was opened: the
    # identity key that wrote it (a direct message's session key at decryption; a group
    # message's, the key of the session that delivered its sender key), the device that
    # key was judged as, and its state. None: not encrypted, or stored before judgements
    # were kept (then unverified).
    sender_identity: bytes | None = None
    trust_device_id: str | None = None
    trust_state: TrustState | None = None
    # The widget answer this request is (None: it is none), parsed once from `widget`
    # (widget_answers.py) when the request is made: every consumer reads it here.
    answer: WidgetResponse | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer", parse_response(self.widget))

    @property
    def is_group(self) -> bool:
        return is_group_recipient(self.to, self.conversation_id)

    @property
    def is_chat(self) -> bool:
        """Whether a person wrote it (a text, with files or not): not a widget's answer."""
        return self.kind in CHAT_KINDS

    @property
    def is_widget_answer(self) -> bool:
        """Whether it answers a widget (`answer`: its parse, none when it is malformed)."""
        return self.kind == WIDGET_RESPONSE

    def for_host(self) -> Request:
        """This request as the host is given it: its attachments' public fields only (the
        keys stay in the client, which downloads: attachments.py)."""
        if not self.attachments:
            return self
        return replace(self, attachments=tuple(public_attachment(a) for a in self.attachments))

    @property
    def judged(self) -> DeviceTrust:
        """The judgement every consumer reads: trusted only if judged so when opened."""
        return DeviceTrust(
            self.sender_id,
            self.trust_device_id or self.sender_device_id,
            self.sender_identity,
            self.trust_state or TrustState.UNVERIFIED,
        )

    @classmethod
    def build(
        cls,
        message: InboundMessage,
        content: Content,
        received_at: float,
        *,
        group_key: str | None = None,
        sender_identity: bytes | None = None,
        trust_device_id: str | None = None,
    ) -> Request:
        """The request to keep; RequestTooLargeError if its stored form exceeds the limit."""
        request = cls(
            message_id=message.message_id,
            conversation_id=message.conversation_id,
            sender_id=message.sender_id,
            sender_device_id=message.sender_device_id,
            to=message.to,
            encrypted=message.encrypted,
            kind=content.kind,
            text=content.text,
            reply_to_message_id=message.reply_to_message_id,
            received_at=received_at,
            attachments=content.attachments,
            widget=content.widget,
            relayed_at=message.relayed_at,
            group_key=group_key,
            sender_identity=sender_identity,
            trust_device_id=trust_device_id,
        )
        size = stored_size(request.to_json())
        if size > MAX_REQUEST_BYTES:
            raise RequestTooLargeError(f"{size} bytes stored, over {MAX_REQUEST_BYTES}")
        # Its judgement (trust/door.py) adds a few bytes to that once opened.
        return request

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "conversation_id": self.conversation_id,
            "sender_id": self.sender_id,
            "sender_device_id": self.sender_device_id,
            "to": self.to,
            "encrypted": self.encrypted,
            "kind": self.kind,
            "text": self.text,
            "reply_to_message_id": self.reply_to_message_id,
            "received_at": self.received_at,
            "attachments": [dict(item) for item in self.attachments],
            "widget": dict(self.widget) if self.widget is not None else None,
            "relayed_at": self.relayed_at,
            "group_key": self.group_key,
            "sender_identity": self.sender_identity.hex() if self.sender_identity else None,
            "trust_device_id": self.trust_device_id,
            "trust_state": self.trust_state.value if self.trust_state else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Request:
        return cls(
            message_id=str(data["message_id"]),
            conversation_id=str(data["conversation_id"]),
            sender_id=str(data["sender_id"]),
            sender_device_id=str(data["sender_device_id"]),
            to=str(data["to"]),
            encrypted=bool(data["encrypted"]),
            kind=str(data["kind"]),
            text=str(data["text"]),
            reply_to_message_id=data.get("reply_to_message_id"),
            received_at=float(data["received_at"]),
            attachments=tuple(dict(item) for item in data.get("attachments") or ()),
            widget=data.get("widget"),
            relayed_at=_optional_float(data.get("relayed_at")),
            group_key=_optional_str(data.get("group_key")),
            # Absent in requests stored before judgements were kept (trust/door.py).
            sender_identity=_optional_hex(data.get("sender_identity")),
            trust_device_id=_optional_str(data.get("trust_device_id")),
            trust_state=_optional_state(data.get("trust_state")),
        )


@dataclass(frozen=True, slots=True)
class Inbox:
    received: Mapping[str, tuple[str, Request]] = field(default_factory=dict)
    accepted: Mapping[str, str] = field(default_factory=dict)
    pending: Mapping[str, Request] = field(default_factory=dict)
    rejected: Mapping[str, str] = field(default_factory=dict)
    # Per group key, the IVs of the group messages taken or sent with it (see the module
    # docstring), oldest first; and the global digests of a store from before.
    group_seals: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    legacy_seals: frozenset[str] = frozenset()

    def with_group_seal(self, seal: GroupSeal) -> Inbox:
        known = self.group_seals.get(seal.key_name, ())
        seals = {**self.group_seals, seal.key_name: (*known, seal.iv)[-MAX_SEALS_PER_KEY:]}
        return replace(self, group_seals=seals)

    def has_group_seal(self, seal: GroupSeal) -> bool:
        """Whether a group message with this seal was taken or sent before: a replay."""
        return seal.iv in self.group_seals.get(seal.key_name, ()) or (
            bool(self.legacy_seals) and seal.digest in self.legacy_seals
        )

    def with_seals_of(self, key_names: Iterable[str]) -> Inbox:
        """Only the seals of the keys still held (they go with their key)."""
        held = set(key_names)
        if held >= self.group_seals.keys():
            return self
        kept = {name: seals for name, seals in self.group_seals.items() if name in held}
        return replace(self, group_seals=kept)

    def receipt(self, message_id: str, digest: str) -> Receipt:
        for known, kind in (
            (self.accepted.get(message_id), Receipt.ACCEPTED),
            (self.rejected.get(message_id), Receipt.REJECTED),
            (self._received_digest(message_id), Receipt.RECEIVED),
        ):
            if known is not None:
                return kind if known == digest else Receipt.CONFLICT
        return Receipt.NEW

    def _received_digest(self, message_id: str) -> str | None:
        entry = self.received.get(message_id)
        return entry[0] if entry is not None else None

    def with_received(self, digest: str, request: Request, seal: GroupSeal | None = None) -> Inbox:
        """With `request` received; `seal` is its group seal, if a group message."""
        inbox = replace(self, received={**self.received, request.message_id: (digest, request)})
        return inbox.with_group_seal(seal) if seal is not None else inbox

    def accept(self, message_ids: Iterable[str]) -> Inbox:
        """The received requests handed over: they become accepted and pending (one copy).

        An id no longer received is skipped, never a KeyError: store_bounds.py may have
        evicted it (MAX_RECEIVED, counted and logged there) between the write that stored
        it and this one, and a KeyError here would fail the whole batch, which the relay
        then redelivers at every connection. Pending requests are bounded (with a log line
        and a count) by store_bounds.py.
        """
        received = dict(self.received)
        accepted = dict(self.accepted)
        pending = dict(self.pending)
        for message_id in message_ids:
            entry = received.pop(message_id, None)
            if entry is None:
                continue
            digest, request = entry
            accepted[message_id] = digest
            pending[message_id] = request
        return replace(
            self,
            received=received,
            accepted=_bounded(accepted, MAX_ACCEPTED_RECEIPTS),
            pending=pending,
        )

    def reject(self, message_id: str, digest: str) -> Inbox:
        return replace(
            self, rejected=_bounded({**self.rejected, message_id: digest}, MAX_REJECTED_RECEIPTS)
        )

    def processed(self, message_id: str) -> Inbox:
        pending = dict(self.pending)
        pending.pop(message_id, None)
        return replace(self, pending=pending)

    def to_json(self) -> dict[str, Any]:
        return {
            "received": [
                {"digest": digest, "request": request.to_json()}
                for digest, request in self.received.values()
            ],
            "accepted": dict(self.accepted),
            "pending": [request.to_json() for request in self.pending.values()],
            "rejected": dict(self.rejected),
            "group_seals": {name: list(seals) for name, seals in self.group_seals.items()},
            "legacy_group_seals": sorted(self.legacy_seals),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Inbox:
        received = {
            item["request"]["message_id"]: (str(item["digest"]), Request.from_json(item["request"]))
            for item in data["received"]
        }
        pending = {item["message_id"]: Request.from_json(item) for item in data["pending"]}
        seals_json = data.get("group_seals")
        return cls(
            received=received,
            accepted={str(k): str(v) for k, v in data["accepted"].items()},
            pending=pending,
            rejected={str(k): str(v) for k, v in data["rejected"].items()},
            # Absent in stores written before seals were kept; a list (global digests) in
            # those written before they were kept per key.
            group_seals={
                str(name): tuple(str(iv) for iv in seals)[-MAX_SEALS_PER_KEY:]
                for name, seals in (seals_json if isinstance(seals_json, dict) else {}).items()
            },
            legacy_seals=frozenset(
                str(seal)
                for seal in (
                    seals_json if isinstance(seals_json, list) else data.get("legacy_group_seals")
                )
                or ()
            ),
        )


def group_seal(message: InboundMessage) -> GroupSeal | None:
    """What makes a group message unique: its key's name and its IV (the relay can change
    the id, the routing fields and the JSON around them, never these without the message
    failing to open); None for a direct message or an unreadable payload."""
    if not (message.encrypted and message.is_group):
        return None
    return payload_seal(message.payload)


def payload_seal(payload: bytes) -> GroupSeal | None:
    """The seal of a group payload (`group_seal`), also of the agent's own: the relay could
    reflect them back as the member whose key sealed them. None when unreadable."""
    try:
        sealed = parse_message(payload)
    except PacerelleError:
        return None
    return GroupSeal(sealed.key_name, base64.b64encode(sealed.iv).decode())


def stored_size(value: Any) -> int:
    """Bytes that `value` takes in the store's JSON (same encoding as state/encrypted_file.py)."""
    return len(json.dumps(value, separators=(",", ":")))


def _optional_float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _optional_hex(value: Any) -> bytes | None:
    try:
        return bytes.fromhex(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _optional_state(value: Any) -> TrustState | None:
    try:
        return TrustState(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _bounded[V](items: dict[str, V], limit: int) -> dict[str, V]:
    """The newest `limit` entries (dicts keep insertion order)."""
    if len(items) <= limit:
        return items
    return dict(list(items.items())[-limit:])
