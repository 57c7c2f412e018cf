"""Keep the agent's data within the bounds of limits.py: evict the oldest, log it, count it.

`within_bounds` runs before every save (AgentCore.commit): pending requests by count and
size, history by size (once a bound is passed, down to its low-water mark, LOW_WATER_PERCENT
of it: an agent at the bound evicts a batch once in many messages), session records per
person and conversation and in total, group keys per sender, group and in all
(group_key_bounds.py). The writer then checks the real size of the serialized document;
if it is still over the one limit that loading also applies, `shrink` evicts further
(history, pending requests, archived session states, then whole session records, the
least valuable first) and the save is tried again. So a sender can make the agent forget
old things, never make its store unloadable. What was evicted is counted in `Evictions`,
saved with the data and shown in diagnostics.
"""

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace

from .conversations.group_key_bounds import KeyValue, bound_group_keys
from .limits import (
    MAX_DEVICES_PER_PEER,
    MAX_GROUP_KEY_EPOCHS,
    MAX_GROUP_SEALS,
    MAX_HISTORY_BYTES,
    MAX_KEYED_GROUPS,
    MAX_KEYS_PER_GROUP,
    MAX_LAST_DEVICES,
    MAX_PENDING,
    MAX_PENDING_BYTES,
    MAX_RECEIVED,
    MAX_SESSION_RECORDS,
    low_water,
)
from .signal.session_json import record_to_json, state_to_json
from .stored_sizes import StoredSizes
from .values.agent_data import AgentData
from .values.history import HandledRequest, History, Reply
from .values.requests import Request, stored_size

_LOGGER = logging.getLogger(__name__)

SHRINK_MARGIN = 64 * 1024
"""Bytes evicted beyond the writer's excess, so one shrink is enough despite estimates."""


def within_bounds(
    data: AgentData, sizes: StoredSizes | None = None, group_keys_valued: KeyValue | None = None
) -> AgentData:
    """`data` with the oldest pending requests, history, sessions and group keys beyond the
    limits gone.

    `sizes` (the agent's) spares measuring again what an earlier save measured;
    `group_keys_valued` tells the group keys kept first (group_key_bounds.py).
    """
    sizes = StoredSizes() if sizes is None else sizes
    data = _bound_received(data)
    data = _bound_pending(data, sizes)
    data = _bound_history(data, sizes)
    sizes.settle()
    data = _bound_last_devices(data)
    if (
        data.conversations.group_keys is not sizes.bounded_group_keys
        or data.inbox.group_seals is not sizes.bounded_group_seals
    ):
        data = _bound_group_keys(data, group_keys_valued)
        sizes.bounded_group_keys = data.conversations.group_keys
        sizes.bounded_group_seals = data.inbox.group_seals
    return _bound_sessions(data, sizes)


def shrink(data: AgentData, excess: int) -> AgentData:
    """`data` with at least `excess` more bytes (estimated) evicted, least valuable first."""
    remaining = excess + SHRINK_MARGIN
    counts = {"store_shrinks": 1}
    for kind, candidates in _shrink_candidates(data):
        for evict, size in candidates:
            if remaining <= 0:
                break
            data = evict(data)
            counts[kind] = counts.get(kind, 0) + 1
            remaining -= size
    _LOGGER.warning(
        "The agent's store was %d bytes over its limit; evicted the oldest: %s",
        excess,
        ", ".join(f"{count} {kind}" for kind, count in counts.items() if kind != "store_shrinks"),
    )
    return _counted(data, **counts)


type Eviction = tuple[Callable[[AgentData], AgentData], int]


def _shrink_candidates(data: AgentData) -> Iterator[tuple[str, Iterator[Eviction]]]:
    yield "history_entries", _history_evictions(data.history)
    yield "pending_requests", _pending_evictions(data)
    yield "archived_sessions", _archived_evictions(data)
    yield "sessions", _session_evictions(data)


def _history_evictions(history: History) -> Iterator[Eviction]:
    for kind, size in _history_oldest_first(history, StoredSizes()):
        yield _drop_oldest_history_entry(kind), size


def _drop_oldest_history_entry(kind: str) -> Callable[[AgentData], AgentData]:
    def evict(data: AgentData) -> AgentData:
        history = data.history
        if kind == "request":
            return replace(data, history=replace(history, requests=history.requests[1:]))
        return replace(data, history=replace(history, replies=history.replies[1:]))

    return evict


def _pending_evictions(data: AgentData) -> Iterator[Eviction]:
    for message_id, request in list(data.inbox.pending.items()):
        yield _drop_pending(message_id), stored_size(request.to_json())


def _drop_pending(message_id: str) -> Callable[[AgentData], AgentData]:
    def evict(data: AgentData) -> AgentData:
        return replace(data, inbox=data.inbox.processed(message_id))

    return evict


def _archived_evictions(data: AgentData) -> Iterator[Eviction]:
    for name, index in data.signal.archived_states():
        state = data.signal.sessions[name].previous[index]
        # As record_to_json(SessionRecord(current=state)), a stored state left unparsed.
        record = {"trusted_identity": None, "current": state_to_json(state), "previous": []}
        size = stored_size(record)
        yield _drop_archived(name, index), size


def _drop_archived(name: str, index: int) -> Callable[[AgentData], AgentData]:
    # archived_states lists a record's states from the oldest (highest index) down, so
    # removing one never shifts the index of the next one to go.
    def evict(data: AgentData) -> AgentData:
        return replace(data, signal=data.signal.without_archived(name, index))

    return evict


def _session_evictions(data: AgentData) -> Iterator[Eviction]:
    signal = data.signal
    for name in signal.sessions_to_evict(per_peer=MAX_DEVICES_PER_PEER, total=0):
        size = stored_size(record_to_json(signal.sessions[name]))
        yield _drop_session(name), size


def _drop_session(name: str) -> Callable[[AgentData], AgentData]:
    def evict(data: AgentData) -> AgentData:
        return replace(data, signal=data.signal.without_sessions([name]))

    return evict


def _bound_received(data: AgentData) -> AgentData:
    received = data.inbox.received
    excess = len(received) - MAX_RECEIVED
    if excess <= 0:
        return data
    evicted = list(received)[:excess]  # the oldest: the batch in hand is the newest
    _LOGGER.warning(
        "Evicted the %d oldest requests never handed over (over %d), first %s",
        excess,
        MAX_RECEIVED,
        evicted[0],
    )
    gone = set(evicted)
    kept = {key: value for key, value in received.items() if key not in gone}
    inbox = replace(data.inbox, received=kept)
    return _counted(replace(data, inbox=inbox), received_requests=excess)


def _bound_pending(data: AgentData, memo: StoredSizes) -> AgentData:
    pending = data.inbox.pending
    sizes = memo.sizes("pending", pending.values(), Request.to_json)
    total = sum(sizes)
    count = len(pending)
    if count <= MAX_PENDING and total <= MAX_PENDING_BYTES:
        return data
    low_count, low_bytes = low_water(MAX_PENDING), low_water(MAX_PENDING_BYTES)
    evicted: list[str] = []
    for message_id, size in zip(pending, sizes, strict=True):  # oldest first
        if count <= low_count and total <= low_bytes:
            break
        evicted.append(message_id)
        count -= 1
        total -= size
    if not evicted:
        return data
    _LOGGER.warning(
        "Evicted the %d oldest pending requests (over %d requests or %d bytes: down to %d "
        "and %d), first %s",
        len(evicted),
        MAX_PENDING,
        MAX_PENDING_BYTES,
        low_count,
        low_bytes,
        evicted[0],
    )
    inbox = data.inbox
    for message_id in evicted:
        inbox = inbox.processed(message_id)
    return _counted(replace(data, inbox=inbox), pending_requests=len(evicted))


def _history_oldest_first(history: History, memo: StoredSizes) -> list[tuple[str, int]]:
    """(kind, stored size) of every history entry, the oldest first (each kind in order)."""
    entries = [
        (
            item.request.received_at,
            "request",
            index,
            memo.size(("request", item.request.message_id), item, item.to_json),
        )
        for index, item in enumerate(history.requests)
    ]
    entries += [
        (
            reply.sent_at,
            "reply",
            index,
            memo.size(("reply", reply.message_id), reply, reply.to_json),
        )
        for index, reply in enumerate(history.replies)
    ]
    entries.sort(key=lambda entry: (entry[0], entry[1], entry[2]))
    # Each kind leaves in its own order, so evicting "the first request" stays right.
    return [(kind, size) for _, kind, _, size in entries]


def _bound_history(data: AgentData, memo: StoredSizes) -> AgentData:
    requests = memo.total("history requests", data.history.requests, HandledRequest.to_json)
    if requests + memo.total("replies", data.history.replies, Reply.to_json) <= MAX_HISTORY_BYTES:
        return data
    entries = _history_oldest_first(data.history, memo)
    total = sum(size for _, size in entries)
    drop = {"request": 0, "reply": 0}
    low = low_water(MAX_HISTORY_BYTES)
    for kind, size in entries:
        if total <= low:
            break
        drop[kind] += 1
        total -= size
    evicted = drop["request"] + drop["reply"]
    if not evicted:
        return data
    _LOGGER.warning(
        "Evicted the %d oldest history entries (over %d bytes: down to %d)",
        evicted,
        MAX_HISTORY_BYTES,
        low,
    )
    history = data.history
    history = replace(
        history,
        requests=history.requests[drop["request"] :],
        replies=history.replies[drop["reply"] :],
    )
    return _counted(replace(data, history=history), history_entries=evicted)


def _bound_last_devices(data: AgentData) -> AgentData:
    conversations = data.conversations
    excess = len(conversations.last_devices) - MAX_LAST_DEVICES
    if excess <= 0:
        return data
    kept = dict(list(conversations.last_devices.items())[excess:])  # the most recent
    _LOGGER.warning(
        "Forgot the last device of the %d people least recently heard from (over %d)",
        excess,
        MAX_LAST_DEVICES,
    )
    conversations = replace(conversations, last_devices=kept)
    return _counted(replace(data, conversations=conversations), last_devices=excess)


def _bound_group_keys(data: AgentData, valued: KeyValue | None) -> AgentData:
    """Group keys within their bounds; the seals of the keys that went go with them, and
    the epochs of groups whose keys all went (inbox.py, group_epochs.py)."""
    seals = {name: len(items) for name, items in data.inbox.group_seals.items()}
    bounded = bound_group_keys(data.conversations.group_keys, valued, seals)
    conversations = data.conversations
    if bounded.evicted:
        conversations = replace(conversations, group_keys=bounded.keys)
    conversations = conversations.within_held_groups()
    inbox = data.inbox.with_seals_of(conversations.group_keys)
    if conversations is not data.conversations or inbox is not data.inbox:
        data = replace(data, conversations=conversations, inbox=inbox)
    if not bounded.evicted:
        return data
    _LOGGER.warning(
        "Evicted %d group keys: %d of older epochs (%d kept per sender), %d beyond %d in a "
        "group, %d of groups beyond %d, %d beyond %d seals in all, untrusted and least "
        "recently used first",
        bounded.evicted,
        bounded.old_epochs,
        MAX_GROUP_KEY_EPOCHS,
        bounded.over_group,
        MAX_KEYS_PER_GROUP,
        bounded.groups,
        MAX_KEYED_GROUPS,
        bounded.over_seals,
        MAX_GROUP_SEALS,
    )
    return _counted(data, group_keys=bounded.evicted)


def _bound_sessions(data: AgentData, memo: StoredSizes) -> AgentData:
    signal = data.signal
    if memo.same_sessions(signal.sessions):
        return data
    names = signal.sessions_to_evict(per_peer=MAX_DEVICES_PER_PEER, total=MAX_SESSION_RECORDS)
    if not names:
        memo.bounded_sessions = frozenset(signal.sessions)
        return data
    _LOGGER.warning(
        "Evicted %d session records, least recently used first (at most %d per person in a "
        "conversation, %d in all): %s",
        len(names),
        MAX_DEVICES_PER_PEER,
        MAX_SESSION_RECORDS,
        ", ".join(names[:5]),
    )
    signal = signal.without_sessions(names)
    memo.bounded_sessions = frozenset(signal.sessions)
    return _counted(replace(data, signal=signal), sessions=len(names))


def _counted(data: AgentData, **counts: int) -> AgentData:
    return data.counted(**counts)
