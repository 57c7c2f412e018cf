"""Where a collection's new records stand against its last ones, in pointer comparisons.

The store's diff (records.py) and the bounds' sizes (stored_sizes.py) compare a collection
with the one they last saw at every commit. A commit changes a record or two of hundreds:
one appended, the oldest evicted, one marked processed. `align` finds that from two lists
per collection, the keys (or none) and the ids of the records: slices of lists compare in
C, item by item by identity first, so the records that kept their place cost a few
nanoseconds each, where a walk that looks each one up cost ~50 (and was most of a commit at
the caps). The ids are of records the caller still holds (its baseline), so an equal id is
the same record.

The answer covers what a commit does: runs of records kept in order, records changed in
their place (same key, another object), runs of the old ones gone, and a tail of records
after every kept one (new, or moved to the end). Anything else (a new record between old
ones, more than MAX_ALIGNED_CHANGES changes) is None: the caller's full walk decides.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_ALIGNED_CHANGES


@dataclass(slots=True)
class Alignment:
    """How `new` is made of `old`: kept[(old index, new index, length)], changed[(old index,
    new index)], gone[(old start, old end)], and new[tail:] after all of them."""

    kept: list[tuple[int, int, int]] = field(default_factory=list)
    changed: list[tuple[int, int]] = field(default_factory=list)
    gone: list[tuple[int, int]] = field(default_factory=list)
    tail: int = 0


def _same_run(old: Sequence[list[Any]], i: int, new: Sequence[list[Any]], j: int, n: int) -> bool:
    for a, b in zip(old, new, strict=True):  # noqa: SIM110 (a generator costs more here)
        if a[i : i + n] != b[j : j + n]:
            return False
    return True


def _run(old: Sequence[list[Any]], i: int, new: Sequence[list[Any]], j: int) -> int:
    """How many records from old[i] and new[j] on are the same (2 x their number compared)."""
    most = min(len(old[0]) - i, len(new[0]) - j)
    if not _same_run(old, i, new, j, 1):
        return 0
    if _same_run(old, i, new, j, most):
        return most
    low, high = 0, most  # old[i:i+low] is new[j:j+low]; a difference lies in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        if _same_run(old, i + low, new, j + low, middle - low):
            low = middle
        else:
            high = middle
    return low


def align(old: Sequence[list[Any]], new: Sequence[list[Any]]) -> Alignment | None:
    """`new` against `old` (parallel lists: [keys, ids] or [ids]); None if unusual.

    With keys, a record whose key stayed in place and whose object changed is `changed`;
    without them, a record replaced by another between two kept ones is.
    """
    first_old, first_new = old[0], new[0]
    size_old, size_new = len(first_old), len(first_new)
    keyed = len(old) > 1
    result = Alignment()
    i = j = events = 0
    while i < size_old and j < size_new:
        run = _run(old, i, new, j)
        if run:
            result.kept.append((i, j, run))
            i, j = i + run, j + run
            continue
        events += 1
        if events > MAX_ALIGNED_CHANGES:
            return None
        if first_old[i] == first_new[j] or (
            not keyed
            and i + 1 < size_old
            and j + 1 < size_new
            and first_old[i + 1] == first_new[j + 1]
        ):
            result.changed.append((i, j))
            i, j = i + 1, j + 1
            continue
        try:
            found = first_old.index(first_new[j], i + 1)
        except ValueError:
            break  # new[j] is new, or was before old[i]: the tail starts here
        result.gone.append((i, found))
        i = found
    if i < size_old:
        result.gone.append((i, size_old))
    result.tail = j
    return result
