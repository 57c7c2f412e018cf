"""Keeps the state in a SQLite file, a row per record, and blobs beside it as files.

Why SQLite (standard library) over an append-only journal: it gives a row per record and
one transaction per change, kill-safe, with nothing to compact. Each `save` writes only
what changed since the last one, in one transaction:
- a record of a table (state.py's `_TABLES`), without its logs, is a row; it is written
  when its JSON differs from the last written (tables whose records never change once
  stored, `_INSERT_ONLY`, are only looked at for new keys);
- the logs of a conversation or a group (`sent`, `inbox`) only grow: a row per entry, the
  new tail appended;
- an agent's queue is a row per envelope; envelopes are never changed once queued, so
  the queue is compared by identity with the last written one;
- `last_device` a row per conversation; `group_keys` (bounded by the kept epochs) and
  the clock offset one row each.
So what a change costs grows with the household (agents, devices, conversations), never
with the history. WAL with synchronous=NORMAL: a killed process loses nothing committed
(a power cut may lose the last changes, never the file); no fsync per change, as before.

A state file that holds JSON (the whole state, as the emulator wrote it before) is
converted once at load: the SQLite file is built beside it, the JSON kept as
`<name>.json-v1`, and the SQLite file renamed over it; a kill before the rename converts
again at the next start.
"""

import json
import os
import sqlite3
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from .state import _TABLES, EmulatorState, Json, Record

SQLITE_MAGIC = b"SQLite format 3\x00"
JSON_BACKUP_SUFFIX = ".json-v1"
WAL_SIZE_LIMIT = 1024 * 1024  # what a checkpoint leaves of the WAL file, in bytes
_INSERT_ONLY = frozenset({"blobs"})
_LOGS: dict[str, tuple[str, ...]] = {
    "conversations": ("sent", "inbox"),
    "groups": ("sent", "inbox"),
}
_QUEUE = "queues"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS record (
    kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entry (
    kind TEXT NOT NULL, owner TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (kind, owner, seq)
) WITHOUT ROWID;
"""
_UPSERT = "INSERT OR REPLACE INTO record (kind, key, body) VALUES (?, ?, ?)"
_DELETE = "DELETE FROM record WHERE kind = ? AND key = ?"
_APPEND = "INSERT OR REPLACE INTO entry (kind, owner, seq, body) VALUES (?, ?, ?, ?)"
_DROP_ENTRY = "DELETE FROM entry WHERE kind = ? AND owner = ? AND seq = ?"
_DROP_ENTRIES = "DELETE FROM entry WHERE kind = ? AND owner = ?"

type Statement = tuple[str, tuple[Any, ...]]

_FIELDS: dict[type[Record], tuple[str, ...]] = {}


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _body(table: str, record: Record) -> str:
    """The record's row: its fields but its logs (no copy of them, unlike `to_json`)."""
    names = _FIELDS.get(type(record))
    if names is None:
        logs = _LOGS.get(table, ())
        names = _FIELDS[type(record)] = tuple(
            item.name
            for item in fields(record)  # type: ignore[arg-type]
            if item.name not in logs
        )
    return _dump({name: getattr(record, name) for name in names})


def _write_atomically(path: Path, data: bytes) -> None:
    # A reader (or a restarted emulator) sees the old file or the new one, never half of one.
    # No fsync: surviving a killed process is the point, not a power cut.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _connect(path: Path) -> sqlite3.Connection:
    # Mode 0600: SQLite gives its WAL files the database file's mode.
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    connection.executescript(_SCHEMA)
    return connection


def _is_json(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    return bool(head) and head != SQLITE_MAGIC


def _rows(connection: sqlite3.Connection) -> tuple[Json, dict[str, list[int]]]:
    """The state as `EmulatorState.to_json` shapes it, and each queue's entry numbers."""
    data: Json = {name: {} for name in _TABLES}
    data.update(queues={}, group_keys=[], last_device={}, clock_offset=0.0)
    for kind, key, body in connection.execute("SELECT kind, key, body FROM record"):
        if kind in _TABLES:
            row = data[kind][key] = json.loads(body)
            row.update((log, []) for log in _LOGS.get(kind, ()))
        elif kind == "last_device":
            data["last_device"][key] = json.loads(body)
        elif kind in ("group_keys", "clock_offset"):
            data[kind] = json.loads(body)
    seqs: dict[str, list[int]] = {}
    query = "SELECT kind, owner, seq, body FROM entry ORDER BY kind, owner, seq"
    for kind, owner, seq, body in connection.execute(query):
        if kind == _QUEUE:
            data[_QUEUE].setdefault(owner, []).append(json.loads(body))
            seqs.setdefault(owner, []).append(seq)
            continue
        table, log = kind.split(".", 1)
        owner_row = data.get(table, {}).get(owner)
        if owner_row is not None:
            owner_row[log].append(json.loads(body))
    return data, seqs


def read_state(path: Path) -> Json:
    """The state in a state file, as `EmulatorState.to_json` shapes it (for tests reading
    the file of a running emulator)."""
    # Read-write, but querying only: the last connection to close removes the WAL files,
    # which a read-only one cannot.
    connection = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
    connection.execute("PRAGMA query_only=1")
    try:
        return _rows(connection)[0]
    finally:
        connection.close()


class Storage:
    """State and blob storage; in memory only when no state file is given."""

    def __init__(self, state_file: Path | None) -> None:
        self._state_file = state_file
        self._blob_dir = (
            state_file.with_name(state_file.name + ".blobs") if state_file is not None else None
        )
        self._blobs: dict[str, bytes] = {}
        self._connection: sqlite3.Connection | None = None
        self._forget()

    def _forget(self) -> None:
        # What the file holds, as last written: a record's body, a log's length, a queue's
        # envelopes (the objects themselves) and their entry numbers.
        self._bodies: dict[tuple[str, str], str] = {}
        self._keys: dict[str, set[str]] = {name: set() for name in (*_TABLES, "last_device")}
        self._lengths: dict[tuple[str, str], int] = {}
        self._queues: dict[str, list[tuple[Json, int]]] = {}
        self._next_seq = 1

    def load(self) -> EmulatorState:
        if self._state_file is None:
            return EmulatorState()
        self._state_file.parent.mkdir(parents=True, exist_ok=True)
        if self._state_file.exists() and _is_json(self._state_file):
            self._migrate(self._state_file)
        self._connection = _connect(self._state_file)
        return self._read()

    def _read(self) -> EmulatorState:
        """The state the file holds, remembered as what `save` compares the next with."""
        assert self._connection is not None
        data, seqs = _rows(self._connection)
        state = EmulatorState.from_json(data)
        self._forget()
        for name in _TABLES:
            table: dict[str, Record] = getattr(state, name)
            self._keys[name] = set(table)
            for key, record in table.items():
                self._bodies[name, key] = _body(name, record)
                for log in _LOGS.get(name, ()):
                    self._lengths[f"{name}.{log}", key] = len(getattr(record, log))
        for agent_id, queue in state.queues.items():
            self._queues[agent_id] = list(zip(queue, seqs[agent_id], strict=True))
        self._next_seq = 1 + max((seq for items in seqs.values() for seq in items), default=0)
        self._keys["last_device"] = set(state.last_device)
        for conversation_id, device_id in state.last_device.items():
            self._bodies["last_device", conversation_id] = _dump(device_id)
        self._bodies["group_keys", ""] = _dump(state.group_keys)
        self._bodies["clock_offset", ""] = _dump(state.clock_offset)
        return state

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _migrate(self, path: Path) -> None:
        state = EmulatorState.from_json(json.loads(path.read_text()))
        building = path.with_name(path.name + ".converting")
        for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
            leftover.unlink(missing_ok=True)
        self._connection = _connect(building)
        self.save(state)
        self.close()
        backup = path.with_name(path.name + JSON_BACKUP_SUFFIX)
        backup.unlink(missing_ok=True)
        os.link(path, backup)
        building.replace(path)

    def save(self, state: EmulatorState) -> None:
        """Write what changed since the last save, in one transaction."""
        if self._connection is None:
            return
        statements: list[Statement] = []
        for name in _TABLES:
            self._tables(name, getattr(state, name), statements)
        self._queue_changes(state.queues, statements)
        self._mapping("last_device", state.last_device, statements)
        self._single("group_keys", state.group_keys, statements)
        self._single("clock_offset", state.clock_offset, statements)
        if not statements:
            return
        connection = self._connection
        connection.execute("BEGIN")
        try:
            for sql, parameters in statements:
                connection.execute(sql, parameters)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            self._read()  # what the file holds again: the next save writes the rest
            raise

    def _tables(self, name: str, table: dict[str, Record], out: list[Statement]) -> None:
        known = self._keys[name]
        added = 0
        for key, record in table.items():
            if key not in known:
                known.add(key)
                added += 1
            elif name in _INSERT_ONLY:
                continue
            body = _body(name, record)
            if self._bodies.get((name, key)) != body:
                self._bodies[name, key] = body
                out.append((_UPSERT, (name, key, body)))
            for log in _LOGS.get(name, ()):
                self._log(f"{name}.{log}", key, getattr(record, log), out)
        if len(known) != len(table):
            for key in [item for item in known if item not in table]:
                known.discard(key)
                del self._bodies[name, key]
                out.append((_DELETE, (name, key)))
                for log in _LOGS.get(name, ()):
                    self._lengths.pop((f"{name}.{log}", key), None)
                    out.append((_DROP_ENTRIES, (f"{name}.{log}", key)))

    def _log(self, kind: str, owner: str, entries: list[Json], out: list[Statement]) -> None:
        written = self._lengths.get((kind, owner), 0)
        if len(entries) == written:
            return
        if len(entries) < written:  # not a log any more: written again
            out.append((_DROP_ENTRIES, (kind, owner)))
            written = 0
        out.extend(
            (_APPEND, (kind, owner, seq, _dump(entries[seq])))
            for seq in range(written, len(entries))
        )
        self._lengths[kind, owner] = len(entries)

    def _queue_changes(self, queues: dict[str, list[Json]], out: list[Statement]) -> None:
        for agent_id, queue in queues.items():
            old = self._queues.get(agent_id, [])
            if len(old) == len(queue) and all(a is b for (a, _), b in zip(old, queue, strict=True)):
                continue
            kept = {id(envelope): seq for envelope, seq in old}
            new: list[tuple[Json, int]] = []
            for envelope in queue:
                seq = kept.pop(id(envelope), None)
                if seq is None:
                    seq, self._next_seq = self._next_seq, self._next_seq + 1
                    out.append((_APPEND, (_QUEUE, agent_id, seq, _dump(envelope))))
                new.append((envelope, seq))
            out.extend((_DROP_ENTRY, (_QUEUE, agent_id, seq)) for seq in kept.values())
            self._queues[agent_id] = new
        for agent_id in [item for item in self._queues if item not in queues]:
            del self._queues[agent_id]
            out.append((_DROP_ENTRIES, (_QUEUE, agent_id)))

    def _mapping(self, kind: str, mapping: dict[str, str], out: list[Statement]) -> None:
        known = self._keys[kind]
        for key, value in mapping.items():
            body = _dump(value)
            if self._bodies.get((kind, key)) != body:
                known.add(key)
                self._bodies[kind, key] = body
                out.append((_UPSERT, (kind, key, body)))
        if len(known) != len(mapping):
            for key in [item for item in known if item not in mapping]:
                known.discard(key)
                del self._bodies[kind, key]
                out.append((_DELETE, (kind, key)))

    def _single(self, kind: str, value: object, out: list[Statement]) -> None:
        body = _dump(value)
        if self._bodies.get((kind, "")) != body:
            self._bodies[kind, ""] = body
            out.append((_UPSERT, (kind, "", body)))

    def put_blob(self, blob_id: str, data: bytes) -> None:
        if self._blob_dir is None:
            self._blobs[blob_id] = data
            return
        self._blob_dir.mkdir(parents=True, exist_ok=True)
        _write_atomically(self._blob_dir / blob_id, data)

    def get_blob(self, blob_id: str) -> bytes | None:
        if self._blob_dir is None:
            return self._blobs.get(blob_id)
        if not blob_id or "/" in blob_id or blob_id.startswith("."):
            return None
        path = self._blob_dir / blob_id
        return path.read_bytes() if path.is_file() else None
