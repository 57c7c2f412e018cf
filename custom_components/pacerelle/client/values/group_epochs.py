"""Who a group's members are now, as the agent decides it: the group's current epoch.

Epochs and keys come from the members' apps, and a removed member can still seal a key for
any epoch, so nothing he sends alone makes him a member again:
1. the stored current epoch only moves forward, from E to the nearest newer E' only on a key
   for E' from a founder of E (a session whose key for E came with the change that started E);
2. the members of E are the senders of keys held for E, less whoever was a member before E
   and is no founder of E; a newcomer's key counts whenever it comes;
3. a key of a newer epoch opens nothing yet; an older one still opens, but only what a
   current member asks is acted on (Assist, `ask`);
4. the agent seals with a current-epoch key of a member: only that epoch's members read it.
Founders are sessions, so a device the relay invents cannot move a group. First keys (or a
group whose keys all went, group_key_bounds.py) start at the lowest epoch held.
"""

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .groups import GroupKey

type Sender = tuple[str | None, str | None]  # person, device (as group_key_bounds.sender_of)


def _sender(key: GroupKey) -> Sender:
    return key.sender_id, key.sender_device_id


@dataclass(frozen=True, slots=True)
class GroupEpoch:
    """A group's current epoch, the senders whose key for it came with the change (who
    may move the group on: rule 2) and the people removed from it (rule 3)."""

    epoch: int
    founders: frozenset[Sender] = frozenset()
    removed: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "founders": sorted([list(item) for item in self.founders], key=str),
            "removed": sorted(self.removed),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupEpoch:
        epoch = data["epoch"]
        if type(epoch) is not int or epoch < 1:
            raise ValueError("a group epoch is a positive integer")
        founders = frozenset(
            (_optional(item[0]), _optional(item[1])) for item in data.get("founders") or ()
        )
        return cls(epoch, founders, frozenset(str(item) for item in data.get("removed") or ()))


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _of(keys: Iterable[GroupKey], conversation_id: str) -> list[GroupKey]:
    return [key for key in keys if key.conversation_id == conversation_id]


def members_of(epoch: GroupEpoch, keys: Iterable[GroupKey]) -> frozenset[str | None]:
    """Rule 3: the senders of the group's keys of the current epoch, the removed excepted
    (None: keys stored before their sender was recorded)."""
    return frozenset(
        key.sender_id
        for key in keys
        if key.epoch == epoch.epoch and key.sender_id not in epoch.removed
    )


def advance(
    current: GroupEpoch | None,
    keys: Iterable[GroupKey],
    conversation_id: str,
    learned: Collection[str] = (),
) -> GroupEpoch | None:
    """The group's epoch once `learned` (names of keys just learned, all held in `keys`)
    came: rules 1-3. None when the agent holds no key of the group."""
    held = _of(keys, conversation_id)
    if not held:
        return None
    if current is None:  # first keys, or a store from before: all count as learned now
        learned = {key.name for key in held}
        lowest = min(key.epoch for key in held)
        current = GroupEpoch(lowest, frozenset(_sender(k) for k in held if k.epoch == lowest))
    while True:
        vouched = [
            k.epoch for k in held if k.epoch > current.epoch and _sender(k) in current.founders
        ]
        if not vouched:
            break
        nearest = min(vouched)
        founders = frozenset(
            _sender(key)
            for key in held
            if key.epoch == nearest and (_sender(key) in current.founders or key.name in learned)
        )
        was = (members_of(current, held) | current.removed) - {person for person, _ in founders}
        current = GroupEpoch(nearest, founders, frozenset(p for p in was if p is not None))
    # Bounded: only senders of keys still held are remembered.
    senders = {_sender(key) for key in held}
    people = {person for person, _ in senders if person is not None}
    return GroupEpoch(current.epoch, current.founders & senders, current.removed & people)


def opens(epoch: GroupEpoch | None, key: GroupKey) -> bool:
    """Rule 4: whether `key` may open a message (not of an epoch the group never entered)."""
    return epoch is None or key.epoch <= epoch.epoch


def sealing_candidates(epoch: GroupEpoch | None, keys: Iterable[GroupKey]) -> list[GroupKey]:
    """Rule 5: the keys of the current epoch from its members."""
    if epoch is None:
        return []
    members = members_of(epoch, keys)
    return [key for key in keys if key.epoch == epoch.epoch and key.sender_id in members]


def readers_of(
    epoch: GroupEpoch | None, keys: Iterable[GroupKey], sealed: GroupKey
) -> list[GroupKey]:
    """The keys of those who read what `sealed` seals: every key of its epoch (each member
    of then made one, and every member's device holds every other's), from the members
    of that epoch when it is the current one (rule 3: not from the removed)."""
    same = [k for k in keys if k.conversation_id == sealed.conversation_id]
    of_epoch = [k for k in same if k.epoch == sealed.epoch]
    if epoch is None or epoch.epoch != sealed.epoch:
        return of_epoch
    return sealing_candidates(epoch, same)


def counts_as_member(members: frozenset[str], sender_id: str) -> bool:
    """Whether a sender is a member now: one of `members` (the current epoch's), or anyone
    when none is known (keys stored before their sender was recorded; the relay delivers a
    group's messages from its members only)."""
    return not members or sender_id in members


def member_ids(epoch: GroupEpoch | None, keys: Iterable[GroupKey], agent_id: str) -> frozenset[str]:
    """The members of now as people (the agent itself and unrecorded senders excluded)."""
    if epoch is None:
        return frozenset()
    return frozenset(
        sender for sender in members_of(epoch, keys) if sender is not None and sender != agent_id
    )
