"""What this agent already handed over, kept where a restore of its state does not reach.

A restored state still holds keys that open messages the newer state handed over; a relay
redelivering them (under any id) would make the home act again. So each hand-over leaves a
mark, kept outside the restorable folder (state/handed_over_file.py), and the pipeline
refuses (acknowledges, logs, never hands over) a message whose mark it holds. A mark is what
the relay cannot change without the message failing to open: the digest of the inner Signal
message, of a group message's key name and IV, or of an unencrypted one's conversation and id.
Bounds: the last MAX_HANDED_OVER hand-overs (as many as the store's receipts), and apart the
last MAX_HANDED_OVER trusted ones, so invented senders can push out only untrusted marks.
A mark is kept right before its event (Storage.mark), between the writes that store and accept
the request (inbox/pipeline.py); after a kill, marked means its event fired.
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_HANDED_OVER
from ..relay.frames import InboundMessage
from ..signal.errors import SignalError
from ..signal.wire import PreKeySignalMessage, parse_frame
from .requests import payload_seal

MARK_LENGTH = 32  # hex characters: 128 bits of a SHA-256


def hand_over_mark(message: InboundMessage) -> str:
    """The mark of `message` (module docstring); an unreadable payload gets its id's."""
    if message.encrypted and message.is_group:
        seal = payload_seal(message.payload)
        if seal is not None:
            return seal.digest
    elif message.encrypted:
        try:
            parsed = parse_frame(message.payload)
        except SignalError:
            pass  # refused when opened: no hand-over, never a mark
        else:
            inner = parsed.message if isinstance(parsed, PreKeySignalMessage) else parsed
            return _digest(b"direct", inner.serialized)
    return _digest(b"id", message.conversation_id.encode(), message.message_id.encode())


def handed_over_before(marks: HandedOver, message: InboundMessage) -> bool:
    """Whether `message` was handed over before: by this state before a kill (its stored
    copy is then accepted without a second event), or by a newer state that a restore took
    back (then it is only acknowledged, logged at warning: inbox/pipeline.py)."""
    return hand_over_mark(message) in marks


def _digest(kind: bytes, *parts: bytes) -> str:
    return hashlib.sha256(b"\0".join((kind, *parts))).hexdigest()[:MARK_LENGTH]


@dataclass(frozen=True, slots=True)
class HandedOver:
    """The marks of the last MAX_HANDED_OVER hand-overs, oldest first, and apart those of
    the last MAX_HANDED_OVER trusted requests: only a trusted request can push a trusted
    one's mark out, so invented senders cannot flush the marks of what could make the home
    act. Immutable."""

    marks: dict[str, None] = field(default_factory=dict)
    trusted: dict[str, None] = field(default_factory=dict)

    def __contains__(self, mark: object) -> bool:
        return mark in self.marks or mark in self.trusted

    def with_marks(self, marks: Iterable[str], *, trusted: Iterable[str] = ()) -> HandedOver:
        """With `marks` added (those of trusted requests also given as `trusted`)."""
        return HandedOver(_added(self.marks, marks), _added(self.trusted, trusted))

    def to_json(self) -> dict[str, list[str]]:
        return {"all": list(self.marks), "trusted": list(self.trusted)}

    @classmethod
    def from_json(cls, value: Any) -> HandedOver:
        """What was kept; anything else than marks is ignored (a host's file). A plain list
        is the form before trusted marks were kept apart."""
        if isinstance(value, list):
            return cls(_read(value))
        if not isinstance(value, dict):
            return cls()
        return cls(_read(value.get("all")), _read(value.get("trusted")))


def _added(kept: dict[str, None], marks: Iterable[str]) -> dict[str, None]:
    added = {**kept}
    for mark in marks:
        added.pop(mark, None)  # moved to the newest end
        added[mark] = None
    if len(added) > MAX_HANDED_OVER:
        added = dict.fromkeys(list(added)[-MAX_HANDED_OVER:])
    return added


def _read(value: Any) -> dict[str, None]:
    if not isinstance(value, list):
        return {}
    marks = [item for item in value if _is_mark(item)]
    return dict.fromkeys(marks[-MAX_HANDED_OVER:])


def _is_mark(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) == MARK_LENGTH
        and all(c in "0123456789abcdef" for c in value)
    )
