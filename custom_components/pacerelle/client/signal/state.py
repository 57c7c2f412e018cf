"""The agent's whole Signal state: its prekey material and its sessions, one record per peer.

Immutable: an update builds a new state that shares every untouched record, so handling a
message copies one session record and a small mapping, never the whole state.
"""

import base64
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .errors import SignalError, SignalErrorKind
from .prekeys import PreKeys
from .session import PeerAddress, SessionRecord
from .session_json import record_from_json, record_to_json

STATE_FORMAT = 1
"""Version of this JSON layout (not of the protocol); bump it on any incompatible change."""
_EMPTY_RECORD = SessionRecord()


@dataclass(frozen=True, slots=True)
class AgentSignalState:
    """Prekeys plus session records by peer storage name ("human:{user}:{conv}:device:{n}")."""

    prekeys: PreKeys
    sessions: Mapping[str, SessionRecord] = field(default_factory=lambda: MappingProxyType({}))
    base_keys_seen: Mapping[str, frozenset[bytes]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Base keys that started a session, per "kyber id:signed id" (libsignal's
    mark_kyber_pre_key_used): a replayed PreKey message cannot start a session twice, even
    after its session has left the archive. Kept while the Kyber prekey is."""

    @classmethod
    def new(cls, now: int | None = None) -> AgentSignalState:
        """A new agent: fresh identity, signed and Kyber prekeys, one-time prekeys, no sessions."""
        return cls(PreKeys.create(int(time.time()) if now is None else now))

    def record(self, peer: PeerAddress) -> SessionRecord:
        """The peer's record (an empty one if we never spoke)."""
        return self.sessions.get(peer.storage_name, _EMPTY_RECORD)

    def with_record(self, peer: PeerAddress, record: SessionRecord) -> AgentSignalState:
        """This state with the peer's record replaced."""
        sessions = dict(self.sessions)
        sessions[peer.storage_name] = record
        return replace(self, sessions=MappingProxyType(sessions))

    def with_prekeys(self, prekeys: PreKeys) -> AgentSignalState:
        """This state with new prekey material (after rotation or replenishing)."""
        held = {prekeys.kyber_prekey.prekey_id, *(old.kyber.prekey_id for old in prekeys.retired)}
        seen = {k: v for k, v in self.base_keys_seen.items() if _kyber_id(k) in held}
        return replace(self, prekeys=prekeys, base_keys_seen=MappingProxyType(seen))

    def with_base_key_used(
        self, kyber_id: int, signed_id: int, base_key: bytes
    ) -> AgentSignalState:
        """This state with a session's base key marked; INVALID_MESSAGE if it was already."""
        slot = f"{kyber_id}:{signed_id}"
        seen = self.base_keys_seen.get(slot, frozenset())
        if base_key in seen:
            raise SignalError(SignalErrorKind.INVALID_MESSAGE, "reused base key")
        marked = dict(self.base_keys_seen)
        marked[slot] = seen | {base_key}
        return replace(self, base_keys_seen=MappingProxyType(marked))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of everything (secrets included: store it encrypted)."""
        return {
            "format": STATE_FORMAT,
            "prekeys": self.prekeys.to_json(),
            "sessions": {name: record_to_json(record) for name, record in self.sessions.items()},
            "base_keys_seen": {
                slot: sorted(base64.b64encode(key).decode() for key in keys)
                for slot, keys in self.base_keys_seen.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentSignalState:
        """Read what `to_json` wrote; INVALID_STATE (or UNSUPPORTED_VERSION) otherwise."""
        try:
            if data["format"] != STATE_FORMAT:
                raise SignalError(
                    SignalErrorKind.UNSUPPORTED_VERSION, f"state format {data['format']!r}"
                )
            records = _records_from_json(data["sessions"])
            # Absent from states written before base keys were kept.
            seen = _base_keys_from_json(data.get("base_keys_seen", {}))
            return cls(
                PreKeys.from_json(data["prekeys"]),
                MappingProxyType(records),
                MappingProxyType(seen),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise SignalError(SignalErrorKind.INVALID_STATE, f"agent state: {error!r}") from error


def _records_from_json(sessions: Any) -> dict[str, SessionRecord]:
    if not isinstance(sessions, Mapping) or not all(isinstance(k, str) for k in sessions):
        raise TypeError("sessions must map names to records")
    return {name: record_from_json(record) for name, record in sessions.items()}


def _kyber_id(slot: str) -> int:
    return int(slot.split(":", 1)[0])


def _base_keys_from_json(value: Any) -> dict[str, frozenset[bytes]]:
    if not isinstance(value, Mapping):
        raise TypeError("base_keys_seen must map slots to lists")
    seen: dict[str, frozenset[bytes]] = {}
    for slot, keys in value.items():
        kyber_id, _, signed_id = str(slot).partition(":")
        if not (kyber_id.isdigit() and signed_id.isdigit()) or not isinstance(keys, list):
            raise TypeError(f"bad base_keys_seen entry {slot!r}")
        seen[str(slot)] = frozenset(base64.b64decode(key, validate=True) for key in keys)
    return seen
