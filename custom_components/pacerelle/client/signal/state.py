"""The agent's whole Signal state: its prekey material and its sessions, one record per peer.

Immutable: an update builds a new state that shares every untouched record, so handling a
message copies one session record and a small mapping, never the whole state.

Each record's last use (a decrypt or an encrypt) is kept, so that the number of records can
be bounded by evicting the least recently used (`sessions_to_evict`; the caller decides
when, see client/store_bounds.py). A record whose peer has provably read one of our
messages (`is_established`) goes only after every record whose peer never has: a relay that
invents devices cannot push out a device that really talks with the agent.
"""

import base64
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .errors import SignalError, SignalErrorKind
from .prekeys import PreKeys
from .session import DEVICE_SEPARATOR, PeerAddress, SessionRecord
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
    last_used: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """When each session record was last used (Unix time; 0 if never recorded)."""

    @classmethod
    def new(cls, now: int | None = None) -> AgentSignalState:
        """A new agent: fresh identity, signed and Kyber prekeys, one-time prekeys, no sessions."""
        return cls(PreKeys.create(int(time.time()) if now is None else now))

    def record(self, peer: PeerAddress) -> SessionRecord:
        """The peer's record (an empty one if we never spoke)."""
        return self.sessions.get(peer.storage_name, _EMPTY_RECORD)

    def with_record(
        self, peer: PeerAddress, record: SessionRecord, *, now: float | None = None
    ) -> AgentSignalState:
        """This state with the peer's record replaced, and marked as used `now`."""
        name = peer.storage_name
        sessions = _copied(self.sessions)
        sessions[name] = record
        last_used = _copied(self.last_used)
        last_used[name] = time.time() if now is None else now
        # Built directly (every message passes here): dataclasses.replace is slower.
        return AgentSignalState(
            self.prekeys,
            MappingProxyType(sessions),
            self.base_keys_seen,
            MappingProxyType(last_used),
        )

    def without_sessions(self, names: Iterable[str]) -> AgentSignalState:
        """This state without the named session records."""
        gone = set(names)
        if not gone:
            return self
        sessions = {k: v for k, v in self.sessions.items() if k not in gone}
        last_used = {k: v for k, v in self.last_used.items() if k not in gone}
        return replace(
            self, sessions=MappingProxyType(sessions), last_used=MappingProxyType(last_used)
        )

    def sessions_to_evict(self, *, per_peer: int, total: int) -> list[str]:
        """Records to drop so that no person has more than `per_peer` in a conversation
        and there are at most `total`, the least valuable first (`_eviction_key`)."""
        ordered = sorted(self.sessions, key=self._eviction_key)
        kept_per_peer: dict[str, int] = {}
        for name in reversed(ordered):  # most valuable first
            peer = _peer_name(name)
            kept_per_peer[peer] = kept_per_peer.get(peer, 0) + 1
        evicted: list[str] = []
        for name in ordered:
            peer = _peer_name(name)
            if kept_per_peer[peer] > per_peer:
                kept_per_peer[peer] -= 1
                evicted.append(name)
        over = len(self.sessions) - len(evicted) - total
        if over > 0:
            gone = set(evicted)
            evicted.extend([name for name in ordered if name not in gone][:over])
        return evicted

    def archived_states(self) -> list[tuple[str, int]]:
        """(record name, archive index) of every archived state, least valuable first."""
        ordered = sorted(self.sessions, key=self._eviction_key)
        return [
            (name, index)
            for name in ordered
            for index in reversed(range(len(self.sessions[name].previous)))
        ]

    def without_archived(self, name: str, index: int) -> AgentSignalState:
        """This state without one archived session state of a record."""
        record = self.sessions[name]
        previous = record.previous[:index] + record.previous[index + 1 :]
        sessions = dict(self.sessions)
        sessions[name] = replace(record, previous=previous)
        return replace(self, sessions=MappingProxyType(sessions))

    def _eviction_key(self, name: str) -> tuple[bool, float]:
        """Established records last, then the least recently used first."""
        return (is_established(self.sessions[name]), self.last_used.get(name, 0.0))

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
            "last_used": {name: self.last_used.get(name, 0.0) for name in self.sessions},
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
            # Absent from states written before records were bounded: all count as old.
            last_used = _last_used_from_json(data.get("last_used", {}), records)
            return cls(
                PreKeys.from_json(data["prekeys"]),
                MappingProxyType(records),
                MappingProxyType(seen),
                MappingProxyType(last_used),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise SignalError(SignalErrorKind.INVALID_STATE, f"agent state: {error!r}") from error


def _copied[V](mapping: Mapping[str, V]) -> dict[str, V]:
    """A dict copy; a read-only view (what we hold) copies its dict directly, 3x faster."""
    if isinstance(mapping, MappingProxyType):
        copied: dict[str, V] = mapping.copy()
        return copied
    return dict(mapping)


def _records_from_json(sessions: Any) -> dict[str, SessionRecord]:
    if not isinstance(sessions, Mapping) or not all(isinstance(k, str) for k in sessions):
        raise TypeError("sessions must map names to records")
    return {name: record_from_json(record) for name, record in sessions.items()}


def is_established(record: SessionRecord) -> bool:
    """Whether the peer has read one of our messages in the current session.

    A peer moves to a new ratchet key only after reading our latest one, so a second
    receiving chain proves that it received what we sent: something a relay inventing a
    device cannot fake for a device the agent never wrote to.
    """
    current = record.current
    return current is not None and len(current.ratchet.receiver_chains) >= 2


def _peer_name(name: str) -> str:
    return name.rpartition(DEVICE_SEPARATOR)[0] or name


def _last_used_from_json(value: Any, records: Mapping[str, SessionRecord]) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise TypeError("last_used must map names to times")
    used: dict[str, float] = {}
    for name in records:
        when = value.get(name, 0.0)
        if not isinstance(when, int | float) or isinstance(when, bool) or not math.isfinite(when):
            raise TypeError(f"bad last_used time for {name!r}")
        used[name] = float(when)
    return used


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
