"""Stored sizes remembered between saves, so that the bounds of a save measure what changed.

Serializing every pending request and history entry again at every save, to learn their
sizes, was most of a save's CPU (500 pending requests: 5 ms, twice per message), and even
looking each one up again grew with the store (~0.1 ms a save at the caps). The records are
immutable, so a size is reused while the very same object (`is`) is in the data: `sizes`
keeps, per collection, the records last measured (held, so that their ids stay theirs) and
their sizes in order, aligns the new ones against them in pointer comparisons
(values/alignment.py) and serializes only the records that are new. One per agent
(AgentCore), used by one save at a time (under the agent's lock).
"""

from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

from .values.alignment import align
from .values.requests import stored_size

type Known = tuple[object, int]  # the object measured (held: its id stays its own), size
# Per collection: the records last measured, their ids and their sizes, in order.
type Measured = tuple[list[Any], list[object], list[int]]


class StoredSizes:
    """The sizes last measured, and what the last save found within its bounds."""

    def __init__(self) -> None:
        self._sizes: dict[Hashable, Known] = {}
        self._seen: dict[Hashable, Known] = {}
        self._measured: dict[str, Measured] = {}
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
        return sum(self.sizes(kind, items, to_json))

    def sizes[T](self, kind: str, items: Collection[T], to_json: Callable[[T], Any]) -> list[int]:
        """The stored size of each of `items`, in their order (see the module docstring)."""
        records = list(items)
        ids: list[object] = list(map(id, records))
        before = self._measured.get(kind)
        found = None if before is None else align([before[1]], [ids])
        gaps: list[int] = []  # the records not measured before
        sizes: list[int]
        if before is not None and found is not None:
            sizes = []
            for i, j, n in found.kept:  # records not in a kept run are new or replaced
                gaps += range(len(sizes), j)
                sizes += [0] * (j - len(sizes))
                sizes += before[2][i : i + n]
            gaps += range(len(sizes), len(records))
            sizes += [0] * (len(records) - len(sizes))
        else:
            known = {} if before is None else dict(zip(before[1], before[2], strict=True))
            sizes = [known.get(i, -1) for i in ids]
            gaps = [index for index, size in enumerate(sizes) if size < 0]
        for index in gaps:
            sizes[index] = stored_size(to_json(records[index]))
        self._measured[kind] = (records, ids, sizes)
        return sizes

    def same_sessions(self, sessions: Mapping[str, object]) -> bool:
        """Whether the session names are those last found within bounds."""
        return self.bounded_sessions is not None and sessions.keys() == self.bounded_sessions
