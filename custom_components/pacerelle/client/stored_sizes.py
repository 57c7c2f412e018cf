"""Stored sizes remembered between saves, so that the bounds of a save measure what changed.

Serializing every pending request and history entry again at every save, to learn their
sizes, was most of a save's CPU (500 pending requests: 5 ms, twice per message), and even
looking each one up again grew with the store. The records are immutable, so a size is
reused while the very same object (`is`) is in the data: `total` finds the known ones by
identity in walks that run in C, and serializes only the new ones. One per agent
(AgentCore), used by one save at a time (under the agent's lock).
"""

import itertools
import operator
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

from .inbox.requests import stored_size

type Known = tuple[object, int]  # the object measured (held: its id stays its own), size
_SIZE = operator.itemgetter(1)


class StoredSizes:
    """The sizes last measured, and what the last save found within its bounds."""

    def __init__(self) -> None:
        self._sizes: dict[Hashable, Known] = {}
        self._seen: dict[Hashable, Known] = {}
        # By collection, id(record) -> (record, size): at most twice the records of the
        # collection's last measure (and a few), the rest forgotten.
        self._by_id: dict[str, dict[int, Known]] = {}
        # The group keys mapping and the seals last found within bounds (immutable:
        # replaced on change), so that a save that learned no key does not sort them again.
        self.bounded_group_keys: object = None
        self.bounded_group_seals: object = None
        # The session names last found within bounds: whether a record must go depends on
        # the names alone (how many per person and in all), so the same names need no sort.
        self.bounded_sessions: frozenset[str] | None = None

    def size(self, key: Hashable, entry: object, to_json: Callable[[], Any]) -> int:
        known = self._sizes.get(key)
        if known is None or known[0] is not entry:
            known = (entry, stored_size(to_json()))
        self._seen[key] = known
        return known[1]

    def settle(self) -> None:
        """Forget the entries of `size` that this measure did not see (gone from the data)."""
        self._sizes, self._seen = self._seen, {}

    def total[T](self, kind: str, items: Collection[T], to_json: Callable[[T], Any]) -> int:
        """The stored sizes of `items` summed; only those not measured before are serialized."""
        memo = self._by_id.pop(kind, {})  # put back once consistent
        records = list(items)
        found: list[Known | None] = list(map(memo.get, map(id, records)))
        if None in found:
            missing = map(operator.is_, found, itertools.repeat(None))
            for index in itertools.compress(range(len(found)), missing):
                record = records[index]
                found[index] = memo[id(record)] = (record, stored_size(to_json(record)))
        measured: list[Known] = found  # type: ignore[assignment]  # no None is left
        if len(memo) > 2 * len(measured) + 64:
            memo = {id(known[0]): known for known in measured}
        self._by_id[kind] = memo
        return sum(map(_SIZE, measured))

    def size_of(self, kind: str, record: object) -> int:
        """The size of a record that the last `total` of `kind` measured."""
        return self._by_id[kind][id(record)][1]

    def same_sessions(self, sessions: Mapping[str, object]) -> bool:
        """Whether the session names are those last found within bounds."""
        return self.bounded_sessions is not None and sessions.keys() == self.bounded_sessions
