"""Counters of what was refused or evicted to keep the agent's store bounded (store_bounds.py).

Saved with the agent's data, so they survive restarts, and shown in diagnostics.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class Evictions:
    """How many things were refused or evicted to keep the store bounded, since install."""

    refused_requests: int = 0  # over MAX_REQUEST_BYTES on arrival
    received_requests: int = 0  # decrypted, never handed over (crashes), beyond MAX_RECEIVED
    pending_requests: int = 0
    history_entries: int = 0  # beyond the normal rotation of MAX_HISTORY_ENTRIES
    sessions: int = 0
    last_devices: int = 0  # people forgotten as the last device of a conversation
    archived_sessions: int = 0
    group_keys: int = 0  # beyond the bounds of group_key_bounds.py
    store_shrinks: int = 0  # saves the writer's size check sent back for more eviction

    def added(self, **counts: int) -> Evictions:
        return replace(self, **{name: getattr(self, name) + n for name, n in counts.items()})

    def to_json(self) -> dict[str, int]:
        return {item.name: getattr(self, item.name) for item in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evictions:
        counts = {}
        for item in fields(cls):
            value = data.get(item.name, 0)
            counts[item.name] = value if type(value) is int and value >= 0 else 0
        return cls(**counts)
