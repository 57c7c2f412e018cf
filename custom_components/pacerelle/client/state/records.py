"""The agent's data as records, one per row, and what changed between two commits.

Every part of AgentData that grows is a collection of records (kinds.py: a session, a request, a
receipt, a group key...): `Records.changes` compares the new data with the last one
committed, collection by collection and record by record, by identity first (AgentData is
immutable and shares every untouched object), and encodes only the records whose object
changed. Ordered collections (the least recent first) keep each record's position in a
sequence number; a record moved to the end (a group key used) gets a new one.

A request is stored once, in "requests", under a digest of its content; the received,
pending and history rows name it (the same object in pending and history is one row). A
session's archived states are rows of their own, written once when archived, so a message
rewrites only the current state. Decoding is assembly.py's: back to the document that
AgentData.from_document reads, so that one reading rule stays in one place.
"""

import base64
import hashlib
import itertools
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import orjson

from ..signal.session import Archived, SessionRecord, archived_state
from ..signal.session_json import record_to_json, state_to_json
from ..values.agent_data import AgentData
from ..values.alignment import align
from ..values.requests import Request
from .kinds import ARCHIVED, KINDS, REQUESTS, SESSIONS, Entry, Kind, Row, mapping_items

# An ordered mapping as last committed: the mapping (held, so that the ids stay its
# records'), its keys and the ids of its records, in order (alignment.py).
type Listed = tuple[Mapping[str, object], list[str], list[int]]


def request_key(request: Request) -> str:
    """A request's row: its id and a digest of its content (equal requests share it)."""
    digest = hashlib.sha256(orjson.dumps(request.to_json())).hexdigest()[:32]
    return f"{request.message_id}\0{digest}"


@dataclass(slots=True)
class SessionEntry:
    record: SessionRecord
    last_used: float
    archived: tuple[str, ...]  # the row ids of record.previous, in its order
    seq: int  # the records' order (new ones last, as AgentSignalState keeps them)


def session_json(record: SessionRecord, last_used: float, archived: tuple[str, ...]) -> Any:
    current = record_to_json(SessionRecord(record.trusted_identity, record.current))
    return {**current, "last_used": last_used, "previous": list(archived)}


def archived_json(state: Archived) -> Any:
    return state_to_json(state)


def archived_id(state: Archived, taken: set[str]) -> str:
    base = base64.b64encode(archived_state(state).alice_base_key).decode()[:22]
    unique, n = base, 1
    while unique in taken:
        n += 1
        unique = f"{base}#{n}"
    taken.add(unique)
    return unique


class Changes:
    """The rows one commit writes and deletes, and the state it leaves."""

    def __init__(self, records: Records) -> None:
        self.writes: list[Row] = []
        self.deletes: list[tuple[str, str]] = []
        self.state = dict(records.state)  # a table's dict is replaced, never changed
        self.sources = dict(records.sources)
        self.sessions = dict(records.sessions)
        self.listed = dict(records.listed)
        self.sessions_listed = records.sessions_listed
        self.next_seq = dict(records.next_seq)
        self.refs = dict(records.refs)
        self.touched = set(records.unnamed)  # request keys whose count fell (or is 0)
        # A memo of request_key (a function of the request's content): shared, not copied,
        # its entries are as true for the baseline as for this commit.
        self.request_ids = records.request_ids

    def __bool__(self) -> bool:
        return bool(self.writes or self.deletes)


class Records:
    """The last committed data, as records, and the diff of a new commit against it."""

    def __init__(self) -> None:
        self.state: dict[str, dict[str, Entry]] = {kind.table: {} for kind in KINDS}
        self.sources: dict[str, object] = {}
        self.sessions: dict[str, SessionEntry] = {}
        self.sessions_source: tuple[Mapping[str, object], Mapping[str, float]] | None = None
        self.listed: dict[str, Listed] = {}
        # The sessions as last committed: [names, ids of the records, last uses].
        self.sessions_listed: list[list[Any]] | None = None
        self.next_seq: dict[str, int] = {}
        self.refs: dict[str, int] = {}  # request key -> rows naming it
        self.unnamed: set[str] = set()  # request rows that no row names (from a load)
        # id(request) -> (request, key), the request held so that its id is not reused;
        # an entry whose key is gone is stale (never used, pruned as the map grows).
        self.request_ids: dict[int, tuple[Request, str]] = {}

    def changes(self, extra: Mapping[str, Any], data: AgentData | None) -> Changes:
        """What to write so that the store holds `extra` and `data`; nothing is changed here."""
        changes = Changes(self)
        for kind in KINDS:
            if data is None and kind.table != "doc":
                continue  # a store without an identity yet: the integration's keys only
            source = kind.source(data, extra)  # type: ignore[arg-type]
            if self.sources.get(kind.table, _UNSET) is source:
                continue
            self._diff(kind, source, changes)
            changes.sources[kind.table] = source
        if data is not None:
            sessions_source = (data.signal.sessions, data.signal.last_used)
            if self.sessions_source is None or any(
                a is not b for a, b in zip(self.sessions_source, sessions_source, strict=True)
            ):
                self._diff_sessions(data, changes)
        refs = changes.refs
        for key in changes.touched:
            if refs.get(key, 1) <= 0:
                del refs[key]
                changes.deletes.append((REQUESTS, key))
        if len(changes.request_ids) > 2 * len(refs) + 64:
            changes.request_ids = {
                i: known for i, known in changes.request_ids.items() if known[1] in refs
            }
        return changes

    def adopt(self, changes: Changes, data: AgentData | None) -> None:
        """The commit of `changes` succeeded: it is the new baseline."""
        self.state = changes.state
        self.sources = changes.sources
        self.sessions = changes.sessions
        self.listed = changes.listed
        self.sessions_listed = changes.sessions_listed if data is not None else None
        self.next_seq = changes.next_seq
        self.refs = changes.refs
        self.unnamed = set()  # every request row no row named was deleted by `changes`
        self.request_ids = changes.request_ids
        self.sessions_source = (
            None if data is None else (data.signal.sessions, data.signal.last_used)
        )

    def _diff(self, kind: Kind, source: object, changes: Changes) -> None:
        if kind.ordered and kind.items is mapping_items:
            mapping = cast(Mapping[str, object], source)
            listed: Listed = (mapping, list(mapping), list(map(id, mapping.values())))
            done = self._diff_aligned(kind, listed, changes) or self._diff_appended(
                kind, mapping, changes
            )
            changes.listed[kind.table] = listed
            if done:
                return
        table = kind.table
        old = changes.state[table]
        new: dict[str, Entry] = {}
        last = -1
        next_seq = changes.next_seq.get(table, 0)
        for key, value in kind.items(source):
            entry = old.get(key)
            in_order = entry is not None and (not kind.ordered or entry[1] > last)
            if entry is not None and in_order and kind.same(entry[0], value):
                new[key] = entry
                last = entry[1]
                continue
            if kind.ordered:
                seq = entry[1] if entry is not None and entry[1] > last else max(next_seq, last + 1)
                next_seq = max(next_seq, seq + 1)
                last = seq
            else:
                seq = 0
            new[key] = self._write(kind, key, value, seq, entry, changes)
        self._gone(kind, old, new, changes)
        changes.state[table] = new
        changes.next_seq[table] = next_seq

    def _diff_aligned(self, kind: Kind, listed: Listed, changes: Changes) -> bool:
        """`_diff` of a mapping against its last commit's lists (alignment.py): the usual
        commit costs pointer comparisons for the records it kept; False, nothing done, if
        there is no last commit or the change is unusual."""
        before = changes.listed.get(kind.table)
        if before is None:
            return False
        source, keys, ids = listed
        found = align([before[1], before[2]], [keys, ids])
        if found is None:
            return False
        table, old_keys = kind.table, before[1]
        values = list(source.values())
        new = dict(changes.state[table])
        for _, j in found.changed:
            entry, value = new[keys[j]], values[j]  # the key of old_keys in its place
            if not kind.same(entry[0], value):  # rewritten in its place
                new[keys[j]] = self._write(kind, keys[j], value, entry[1], entry, changes)
        for start, end in found.gone:
            for key in old_keys[start:end]:
                if key not in new or key in source:
                    continue  # moved to the tail: rewritten there
                self._drop(kind, key, new.pop(key), changes)
        last = new[keys[found.tail - 1]][1] if found.tail else -1
        next_seq = changes.next_seq.get(table, 0)
        for index in range(found.tail, len(keys)):
            key = keys[index]
            seq = max(next_seq, last + 1)
            next_seq, last = seq + 1, seq
            new[key] = self._write(kind, key, values[index], seq, new.pop(key, None), changes)
        changes.state[table] = new
        changes.next_seq[table] = next_seq
        return True

    def _diff_appended(self, kind: Kind, source: Any, changes: Changes) -> bool:
        """`_diff` of a mapping whose records kept their order, new ones only after them
        (a dict's insertion order: the usual commit), in work proportional to the records
        that changed (the walks below run in C); False, nothing done, for any other."""
        table = kind.table
        old = changes.state[table]
        keys: list[str] = list(source)
        values: list[object] = list(source.values())
        entries: list[Entry | None] = list(map(old.get, keys))
        present = len(keys) - entries.count(None)
        if present < len(keys) and entries.index(None) != present:
            return False  # a new record before an old one: its order changed
        kept = cast(list[Entry], entries[:present])
        seqs = list(map(_SEQ, kept))
        if not all(map(operator.lt, seqs, seqs[1:])):
            return False
        new = dict(old)  # a copy in C, in the records' order, which is theirs in `source`
        for key in old.keys() - source.keys() if present < len(old) else ():
            self._drop(kind, key, new.pop(key), changes)
        changed = map(operator.is_not, map(_OBJECT, kept), values)
        for index in itertools.compress(range(present), changed):
            entry, value = kept[index], values[index]
            if not kind.same(entry[0], value):  # rewritten in its place
                new[keys[index]] = self._write(kind, keys[index], value, entry[1], entry, changes)
        last = seqs[-1] if seqs else -1
        next_seq = changes.next_seq.get(table, 0)
        for index in range(present, len(keys)):
            seq = max(next_seq, last + 1)
            next_seq, last = seq + 1, seq
            new[keys[index]] = self._write(kind, keys[index], values[index], seq, None, changes)
        changes.state[table] = new
        changes.next_seq[table] = next_seq
        return True

    def _write(
        self, kind: Kind, key: str, value: object, seq: int, entry: Entry | None, changes: Changes
    ) -> Entry:
        """The row of one new or changed record (its request row too, counted)."""
        rkey = None
        if kind.request is not None:
            rkey = self._request_row(kind.request(value), changes)
            changes.refs[rkey] = changes.refs.get(rkey, 0) + 1
            if entry is not None and entry[2] is not None:
                changes.refs[entry[2]] -= 1
                changes.touched.add(entry[2])
        changes.writes.append((kind.table, key, seq, [key, kind.encode(value), rkey]))
        return (value, seq, rkey)

    @staticmethod
    def _gone(
        kind: Kind, old: Mapping[str, Entry], new: Mapping[str, Entry], changes: Changes
    ) -> None:
        """The rows of records that left (found by a set difference, in C)."""
        if len(new) == len(old) and new.keys() == old.keys():
            return
        for key in old.keys() - new.keys():
            Records._drop(kind, key, old[key], changes)

    @staticmethod
    def _drop(kind: Kind, key: str, entry: Entry, changes: Changes) -> None:
        changes.deletes.append((kind.table, key))
        if entry[2] is not None:
            changes.refs[entry[2]] -= 1
            changes.touched.add(entry[2])

    def _request_row(self, request: Request, changes: Changes) -> str:
        known = changes.request_ids.get(id(request))
        if known is not None and known[0] is request and known[1] in changes.refs:
            return known[1]
        rkey = request_key(request)
        changes.request_ids[id(request)] = (request, rkey)
        if rkey not in changes.refs:
            changes.refs[rkey] = 0
            changes.touched.add(rkey)
            changes.writes.append((REQUESTS, rkey, 0, [rkey, request.to_json(), None]))
        return rkey

    def _diff_sessions(self, data: AgentData, changes: Changes) -> None:
        old = changes.sessions
        last_used = data.signal.last_used
        sessions = data.signal.sessions
        before = self.sessions_source
        listed: list[list[Any]] = [list(sessions), list(map(id, sessions.values()))]
        listed.append(list(map(last_used.get, listed[0])))
        changes.sessions_listed = listed
        found = None
        if before is not None and self.sessions_listed is not None:
            found = align(self.sessions_listed, listed)
        if found is not None and not found.gone and found.tail == len(listed[0]) == len(old):
            # The usual commit: a record or two changed, found by pointer comparisons
            # (the names in the same order, held by `before`, so an equal id is the record).
            new = dict(old)
            names = [listed[0][j] for _, j in found.changed]
        elif before is not None and old.keys() == sessions.keys():
            # Many records changed: found by walks that run in C.
            new = dict(old)
            names = list(sessions)
            records = map(operator.is_not, map(before[0].get, names), sessions.values())
            times = map(operator.ne, map(before[1].get, names), map(last_used.get, names))
            names = list(itertools.compress(names, map(operator.or_, records, times)))
        elif old.keys() == sessions.keys():
            new = dict(old)
            names = [
                name
                for name, record in sessions.items()
                if old[name].record is not record or old[name].last_used != last_used.get(name)
            ]
        else:
            new = {}
            names = list(sessions)
        next_seq = changes.next_seq.get(SESSIONS, 0)
        for name in names:
            record = sessions[name]
            used = float(last_used.get(name, 0.0))
            entry = old.get(name)
            if entry is not None and entry.record is record and entry.last_used == used:
                new[name] = entry
                continue
            archived = self._diff_archived(name, entry, record, changes)
            if entry is None:
                seq, next_seq = next_seq, next_seq + 1
            else:
                seq = entry.seq
            changes.writes.append(
                (SESSIONS, name, seq, [name, session_json(record, used, archived), None])
            )
            new[name] = SessionEntry(record, used, archived, seq)
        changes.next_seq[SESSIONS] = next_seq
        for name, entry in old.items() if new.keys() != old.keys() else ():
            if name not in new:
                changes.deletes.append((SESSIONS, name))
                changes.deletes.extend((ARCHIVED, f"{name}\0{a}") for a in entry.archived)
        changes.sessions = new

    @staticmethod
    def _diff_archived(
        name: str, entry: SessionEntry | None, record: SessionRecord, changes: Changes
    ) -> tuple[str, ...]:
        if (
            entry is not None
            and entry.record.previous is record.previous
            and len(entry.archived) == len(record.previous)  # not a row left from disk
        ):
            return entry.archived  # the usual message: the current state changed, only it
        known: dict[int, tuple[Archived, str]] = {}
        if entry is not None:
            known = {
                id(s): (s, a) for s, a in zip(entry.record.previous, entry.archived, strict=True)
            }
        kept = [known.get(id(s)) for s in record.previous]
        ids: list[str | None] = [
            k[1] if k is not None and k[0] is s else None
            for k, s in zip(kept, record.previous, strict=True)
        ]
        taken = {a for a in ids if a is not None}
        for index, state in enumerate(record.previous):
            if ids[index] is None:
                archive = archived_id(state, taken)
                ids[index] = archive
                key = f"{name}\0{archive}"
                changes.writes.append((ARCHIVED, key, 0, [key, archived_json(state), None]))
        final = tuple(a for a in ids if a is not None)
        if entry is not None:
            changes.deletes.extend(
                (ARCHIVED, f"{name}\0{a}") for a in entry.archived if a not in taken
            )
        return final


_UNSET = object()
_OBJECT = operator.itemgetter(0)
_SEQ = operator.itemgetter(1)


def encoded_rows(changes: Changes) -> list[tuple[str, str, int, bytes]]:
    """The rows to write, serialized (orjson: the store's JSON library)."""
    return [(table, key, seq, orjson.dumps(value)) for table, key, seq, value in changes.writes]
