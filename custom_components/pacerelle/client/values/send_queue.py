"""Sends made while the agent is offline, kept durably until the gateway takes them.

A queued send is already encrypted (its Signal state saved with it): the store keeps the
gateway frame, ciphertext only ("queued_sends"). On the next connection the queue goes out in
order, before any new send (sender.py holds the agent's lock). At most once: a batch is marked
`attempted` before it is written and leaves the queue once written; one still attempted at load
becomes an uncertain send (outbox.py), never written again. Past `expires_at` a send is
dropped and reported `expired`, never sent late. Past MAX_QUEUED_SENDS or MAX_QUEUED_SEND_BYTES
a new send is refused at once and nothing queued is evicted: a first alert is never pushed out.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ErrorKind, PacerelleError
from ..limits import MAX_QUEUED_SEND_BYTES, MAX_QUEUED_SENDS


@dataclass(frozen=True, slots=True)
class QueuedSend:
    message_id: str
    conversation_id: str
    frame: str  # the gateway frame, payload already sealed
    queued_at: float
    expires_at: float
    attempted: bool = False  # being written: uncertain if found so after a restart
    # Whom it was sealed for, re-decided at the flush (trust/door.py): the person (or the
    # group target) and device, the session's remote identity key, the group key's name,
    # and the request it answers. Absent in sends queued before they were kept: then
    # re-decided from the frame's recipient and the session's key (as a send without a
    # source).
    to: str | None = None
    device_id: str | None = None
    identity_key: bytes | None = None
    group_key: str | None = None
    answers: str | None = None

    @property
    def size(self) -> int:
        return len(self.frame.encode())

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "conversation_id": self.conversation_id,
            "frame": self.frame,
            "queued_at": self.queued_at,
            "expires_at": self.expires_at,
            "attempted": self.attempted,
            "to": self.to,
            "device_id": self.device_id,
            "identity_key": self.identity_key.hex() if self.identity_key else None,
            "group_key": self.group_key,
            "answers": self.answers,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueuedSend:
        return cls(
            str(data["message_id"]),
            str(data["conversation_id"]),
            str(data["frame"]),
            float(data["queued_at"]),
            float(data["expires_at"]),
            bool(data.get("attempted", False)),
            _text(data.get("to")),
            _text(data.get("device_id")),
            _key(data.get("identity_key")),
            _text(data.get("group_key")),
            _text(data.get("answers")),
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _key(value: Any) -> bytes | None:
    try:
        return bytes.fromhex(value) if isinstance(value, str) else None
    except ValueError:
        return None


class QueueFullError(PacerelleError):
    """The queue holds MAX_QUEUED_SENDS sends or MAX_QUEUED_SEND_BYTES already."""

    kind = ErrorKind.QUEUE_FULL

    def __init__(self, limit: str) -> None:
        super().__init__(f"the send queue is full ({limit})")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class SendQueue:
    sends: tuple[QueuedSend, ...] = ()

    def __len__(self) -> int:
        return len(self.sends)

    @property
    def total_bytes(self) -> int:
        return sum(send.size for send in self.sends)

    def check_room(self, size: int) -> None:
        """Raise QueueFullError unless one more send of `size` bytes fits."""
        if len(self.sends) >= MAX_QUEUED_SENDS:
            raise QueueFullError(f"{MAX_QUEUED_SENDS} messages")
        if self.total_bytes + size > MAX_QUEUED_SEND_BYTES:
            raise QueueFullError(f"{MAX_QUEUED_SEND_BYTES} bytes")

    def added(self, send: QueuedSend) -> SendQueue:
        return SendQueue((*self.sends, send))

    def without(self, ids: Iterable[str]) -> SendQueue:
        gone = set(ids)
        return SendQueue(tuple(s for s in self.sends if s.message_id not in gone))

    def expired(self, now: float) -> list[QueuedSend]:
        return [s for s in self.sends if s.expires_at <= now and not s.attempted]

    def attempted(self) -> list[QueuedSend]:
        return [s for s in self.sends if s.attempted]

    def marked(self, ids: Iterable[str], *, attempted: bool) -> SendQueue:
        chosen = set(ids)
        return SendQueue(
            tuple(
                replace(s, attempted=attempted) if s.message_id in chosen else s for s in self.sends
            )
        )

    def next_expiry(self) -> float | None:
        return min((s.expires_at for s in self.sends if not s.attempted), default=None)

    def to_json(self) -> list[dict[str, Any]]:
        return [send.to_json() for send in self.sends]

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, Any]]) -> SendQueue:
        return cls(tuple(QueuedSend.from_json(item) for item in data))
