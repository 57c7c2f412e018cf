"""Keep the group keys the agent holds bounded, whatever a relay delivers (limits.py).

A relay can invent sessions and deliver over each any number of group key envelopes, so
before every save (store_bounds.py):
1. per group and sender, one key per epoch (the last learned), newest MAX_GROUP_KEY_EPOCHS
   epochs only: a relay-invented sender crowds out only its own keys;
2. per group at most MAX_KEYS_PER_GROUP keys, then at most MAX_KEYED_GROUPS groups;
3. replay seals (inbox.py) at most MAX_GROUP_SEALS together, whole keys going with their
   seals, so a replay refusal holds as long as its key is held.
Beyond 2 and in 3, keys `valued` refuses (trust.py) go first, then the least recently used
(`Conversations.group_keys` is kept in that order): a trusted key never yields to an invented
one. Without `valued`, recency alone. `evictions.group_keys` counts evictions (diagnostics).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..limits import (
    MAX_GROUP_KEY_EPOCHS,
    MAX_GROUP_SEALS,
    MAX_KEYED_GROUPS,
    MAX_KEYS_PER_GROUP,
)
from ..values.groups import GroupKey

type KeyValue = Callable[[GroupKey], bool]


@dataclass(frozen=True, slots=True)
class BoundedKeys:
    keys: dict[str, GroupKey]
    old_epochs: int  # rule 1: a sender's older epochs, or a key replaced in its epoch
    over_group: int  # rule 2: beyond MAX_KEYS_PER_GROUP
    groups: int  # rule 2: whole groups beyond MAX_KEYED_GROUPS
    over_seals: int = 0  # rule 3: keys whose seals went beyond MAX_GROUP_SEALS

    @property
    def evicted(self) -> int:
        return self.old_epochs + self.over_group + self.groups + self.over_seals


def sender_of(key: GroupKey) -> tuple[str | None, str | None]:
    return key.sender_id, key.sender_device_id


def bound_group_keys(
    keys: Mapping[str, GroupKey],
    valued: KeyValue | None,
    seals: Mapping[str, int] | None = None,
) -> BoundedKeys:
    """`keys` (the least recently used first) within the bounds of limits.py; `seals`
    counts the seals kept per key name (rule 3)."""
    by_group: dict[str, list[tuple[int, GroupKey]]] = {}
    for rank, key in enumerate(keys.values()):
        by_group.setdefault(key.conversation_id, []).append((rank, key))
    old_epochs = over_group = 0
    kept_groups: dict[str, list[tuple[int, GroupKey]]] = {}
    for conversation_id, ranked in by_group.items():
        newest = _newest_epochs_per_sender(ranked)
        old_epochs += len(ranked) - len(newest)
        if len(newest) > MAX_KEYS_PER_GROUP:
            over_group += len(newest) - MAX_KEYS_PER_GROUP
            newest = _most_valuable(newest, valued, MAX_KEYS_PER_GROUP)
        kept_groups[conversation_id] = newest
    dropped_groups = 0
    if len(kept_groups) > MAX_KEYED_GROUPS:
        ordered = sorted(kept_groups, key=lambda cid: _group_value(kept_groups[cid], valued))
        for conversation_id in ordered[: len(kept_groups) - MAX_KEYED_GROUPS]:
            dropped_groups += len(kept_groups.pop(conversation_id))
    survivors = sorted(item for ranked in kept_groups.values() for item in ranked)
    survivors, over_seals = _within_seals(survivors, valued, seals or {})
    if old_epochs == over_group == dropped_groups == over_seals == 0:
        return BoundedKeys(dict(keys), 0, 0, 0)
    return BoundedKeys(
        {key.name: key for _, key in survivors},
        old_epochs,
        over_group,
        dropped_groups,
        over_seals,
    )


def _within_seals(
    ranked: list[tuple[int, GroupKey]], valued: KeyValue | None, seals: Mapping[str, int]
) -> tuple[list[tuple[int, GroupKey]], int]:
    """Rule 3: the least valuable keys go, with their seals, until MAX_GROUP_SEALS hold."""
    total = sum(seals.get(key.name, 0) for _, key in ranked)
    if total <= MAX_GROUP_SEALS:
        return ranked, 0
    dropped: set[int] = set()
    for rank, key in sorted(ranked, key=lambda item: (_valued(item[1], valued), item[0])):
        if total <= MAX_GROUP_SEALS:
            break
        if not seals.get(key.name):
            continue  # evicting it would not bring the seals down
        total -= seals[key.name]
        dropped.add(rank)
    return [item for item in ranked if item[0] not in dropped], len(dropped)


def _newest_epochs_per_sender(ranked: list[tuple[int, GroupKey]]) -> list[tuple[int, GroupKey]]:
    """Rule 1: per sender, the key learned last of each of its newest epochs."""
    per_epoch: dict[tuple[str | None, str | None, int], tuple[int, GroupKey]] = {}
    for rank, key in ranked:  # least recent first: the last one learned wins its epoch
        per_epoch[(*sender_of(key), key.epoch)] = (rank, key)
    epochs: dict[tuple[str | None, str | None], list[int]] = {}
    for sender_id, device_id, epoch in per_epoch:
        epochs.setdefault((sender_id, device_id), []).append(epoch)
    floor = {
        sender: sorted(held, reverse=True)[:MAX_GROUP_KEY_EPOCHS][-1]
        for sender, held in epochs.items()
    }
    return sorted(
        (rank, key)
        for (sender_id, device_id, epoch), (rank, key) in per_epoch.items()
        if epoch >= floor[(sender_id, device_id)]
    )


class SenderEpochs:
    """Per sender in a group, the epochs held: an envelope older than the window rule 1
    keeps is not worth opening (its key would be evicted at the next save)."""

    def __init__(self, keys: Mapping[str, GroupKey], conversation_id: str) -> None:
        self._epochs: dict[tuple[str | None, str | None], set[int]] = {}
        for key in keys.values():
            if key.conversation_id == conversation_id:
                self.add(key)

    def add(self, key: GroupKey) -> None:
        self._epochs.setdefault(sender_of(key), set()).add(key.epoch)

    def worth_opening(self, sender: tuple[str, str], epoch: int) -> bool:
        held = self._epochs.get(sender, set())
        if len(held) < MAX_GROUP_KEY_EPOCHS:
            return True
        return epoch >= sorted(held, reverse=True)[MAX_GROUP_KEY_EPOCHS - 1]


def _most_valuable(
    ranked: list[tuple[int, GroupKey]], valued: KeyValue | None, count: int
) -> list[tuple[int, GroupKey]]:
    ordered = sorted(ranked, key=lambda item: (_valued(item[1], valued), item[0]))
    return sorted(ordered[-count:])


def _group_value(ranked: list[tuple[int, GroupKey]], valued: KeyValue | None) -> tuple[bool, int]:
    return max((_valued(key, valued), rank) for rank, key in ranked)


def _valued(key: GroupKey, valued: KeyValue | None) -> bool:
    return valued is not None and valued(key)
