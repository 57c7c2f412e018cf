"""The collections of the agent's data that the store keeps as records, one row each.

Each Kind says where its collection is in AgentData, its records in order with their
logical keys, how a record is encoded and when an unchanged one is the same (records.py
diffs them, assembly.py reads them back).
"""

import base64
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..values.agent_data import AgentData
from ..values.requests import Request
from ..values.trust_book import TrustBook

type Row = tuple[str, str, int, Any]  # table, logical key, sequence number, JSON value
type Entry = tuple[object, int, str | None]  # the object, its sequence, its request key
_PLAIN = (str, int, float, bool, type(None), tuple, frozenset)


def _same(old: object, new: object) -> bool:
    """Unchanged: the same object, or an equal plain value (a string, a flat tuple)."""
    return old is new or (type(new) in _PLAIN and old == new)


def _equal(old: object, new: object) -> bool:
    return old is new or old == new


@dataclass(frozen=True, slots=True)
class Kind:
    """One collection: where it is in the data, its records in order, their encoding."""

    table: str
    source: Callable[[AgentData, Mapping[str, Any]], object]
    items: Callable[[Any], Iterable[tuple[str, object]]]
    encode: Callable[[Any], Any]
    ordered: bool = True
    same: Callable[[object, object], bool] = _same
    request: Callable[[Any], Request] | None = None  # rows that name a stored request


def _keyed(pairs: Iterable[tuple[str, object]]) -> Iterable[tuple[str, object]]:
    """Keys made unique within a collection (a repeated one gets "#n")."""
    seen: set[str] = set()
    for key, value in pairs:
        unique, n = key, 1
        while unique in seen:
            n += 1
            unique = f"{key}#{n}"
        seen.add(unique)
        yield unique, value


def mapping_items(mapping: Mapping[str, object]) -> Iterable[tuple[str, object]]:
    return mapping.items()


def _one(value: object) -> Iterable[tuple[str, object]]:
    return (("", value),)


def _base_keys(seen: Mapping[str, frozenset[bytes]]) -> Iterable[tuple[str, object]]:
    for slot, keys in seen.items():
        for key in keys:
            encoded = base64.b64encode(key).decode()
            yield f"{slot}|{encoded}", (slot, encoded)


_NO_DEVICES: Mapping[str, object] = {}


def _trust_devices(data: AgentData) -> Mapping[str, object]:
    return data.trust.devices if isinstance(data.trust, TrustBook) else _NO_DEVICES


def _trust_book(trust: object) -> Iterable[tuple[str, object]]:
    """The book's own row: always there once a book is (trust/kept.py tells a store without
    one from one that lost it)."""
    if isinstance(trust, TrustBook):
        return (("", {"first_use": trust.first_use}),)
    return (("", str(trust)),)


KINDS: tuple[Kind, ...] = (
    Kind("doc", lambda d, e: e, mapping_items, lambda v: v, False, _equal),
    Kind("prekeys", lambda d, e: d.signal.prekeys, _one, lambda p: p.to_json(), False),
    Kind(
        "base_keys",
        lambda d, e: d.signal.base_keys_seen,
        _base_keys,
        lambda v: list(v),
        False,
    ),
    Kind(
        "received",
        lambda d, e: d.inbox.received,
        mapping_items,
        lambda v: v[0],
        request=lambda v: v[1],
    ),
    Kind("accepted", lambda d, e: d.inbox.accepted, mapping_items, lambda v: v),
    Kind(
        "pending",
        lambda d, e: d.inbox.pending,
        mapping_items,
        lambda v: None,
        request=lambda v: v,
    ),
    Kind("rejected", lambda d, e: d.inbox.rejected, mapping_items, lambda v: v),
    # Per group key, the IVs of its messages (a tuple: compared by value when not the same).
    Kind("seals", lambda d, e: d.inbox.group_seals, mapping_items, lambda v: list(v)),
    Kind("legacy_seals", lambda d, e: d.inbox.legacy_seals, _one, lambda s: sorted(s), False),
    Kind(
        "handled",
        lambda d, e: d.history.requests,
        lambda t: _keyed((i.request.message_id, i) for i in t),
        lambda i: [i.processed_at, i.note],
        request=lambda i: i.request,
    ),
    Kind(
        "replies",
        lambda d, e: d.history.replies,
        lambda t: _keyed((r.message_id, r) for r in t),
        lambda r: r.to_json(),
    ),
    Kind(
        "checkpoints",
        lambda d, e: d.checkpoints.items,
        mapping_items,
        lambda c: c.to_json(),
    ),
    Kind(
        "history_keys",
        lambda d, e: d.conversations.history_keys,
        mapping_items,
        lambda k: k.to_json(),
    ),
    Kind(
        "group_keys",
        lambda d, e: d.conversations.group_keys,
        mapping_items,
        lambda k: k.to_json(),
    ),
    Kind(
        "group_epochs",
        lambda d, e: d.conversations.group_epochs,
        mapping_items,
        lambda g: g.to_json(),
    ),
    Kind("last_devices", lambda d, e: d.conversations.last_devices, mapping_items, lambda v: v),
    Kind("named", lambda d, e: d.conversations.named, mapping_items, lambda v: v, False),
    Kind(
        "uncertain",
        lambda d, e: d.uncertain,
        _one,
        lambda t: [
            {"message_id": s.message_id, "conversation_id": s.conversation_id, "at": s.at}
            for s in t
        ],
        False,
    ),
    Kind(
        "published",
        lambda d, e: d.published_prekeys,
        _one,
        lambda s: sorted(s),
        False,
    ),
    Kind("evictions", lambda d, e: d.evictions, _one, lambda v: v.to_json(), False, _equal),
    # The trust book: a row per (person, device), and the book's own (trust/kept.py).
    Kind("trust", lambda d, e: _trust_devices(d), mapping_items, lambda t: t.to_json(), False),
    Kind("trust_book", lambda d, e: d.trust, _trust_book, lambda v: v, False, _equal),
    Kind(
        "queued",
        lambda d, e: d.queued.sends,
        lambda t: _keyed((s.message_id, s) for s in t),
        lambda s: s.to_json(),
    ),
)
SESSIONS = "sessions"
ARCHIVED = "archived"
REQUESTS = "requests"
TABLES = (*(kind.table for kind in KINDS), SESSIONS, ARCHIVED, REQUESTS)
