"""The agent's whole Signal state: its prekey material and its sessions, one record per peer.

Immutable: an update builds a new state that shares every untouched record, so handling a
message copies one session record and a small mapping, never the whole state.
"""

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
        return replace(self, prekeys=prekeys)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of everything (secrets included: store it encrypted)."""
        return {
            "format": STATE_FORMAT,
            "prekeys": self.prekeys.to_json(),
            "sessions": {name: record_to_json(record) for name, record in self.sessions.items()},
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
            return cls(PreKeys.from_json(data["prekeys"]), MappingProxyType(records))
        except (KeyError, TypeError) as error:
            raise SignalError(SignalErrorKind.INVALID_STATE, f"agent state: {error!r}") from error


def _records_from_json(sessions: Any) -> dict[str, SessionRecord]:
    if not isinstance(sessions, Mapping) or not all(isinstance(k, str) for k in sessions):
        raise TypeError("sessions must map names to records")
    return {name: record_from_json(record) for name, record in sessions.items()}
