"""Rows back into the store document, and the loaded data as the baseline of the next diff.

The document is exactly what AgentData.sections() writes (plus the integration's keys), so
AgentData.from_document keeps being the one reader of the runtime's data. A row that names
a request or an archived state the store does not hold is a damaged store (StoreError),
never a partial load taken as complete.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from ..signal.errors import SignalError, SignalErrorKind
from ..signal.session import SessionRecord
from ..signal.session_json import stored_state
from ..signal.state import STATE_FORMAT
from ..values.agent_data import AgentData
from .errors import StoreError, StoreProblem
from .kinds import ARCHIVED, KINDS, REQUESTS, SESSIONS
from .records import Records, SessionEntry

type Loaded = dict[str, dict[str, tuple[int, Any, Any]]]  # table -> key -> (seq, value, extra)
type RowKey = Callable[[str, str], bytes]  # (table, logical key) -> the row's key on disk


def loaded_rows(rows: Iterable[tuple[str, bytes, int, bytes]], row_key: RowKey) -> Loaded:
    """Decrypted rows (table, rkey, seq, JSON of [key, value, extra]) by table, each in
    its order.

    Every row was authenticated (record_file.py). Archived session states, most of the
    store at its caps and rarely used again, are not parsed here: each is found under the
    row key its session names (missing: StoreError, now) and kept as its JSON bytes, a
    StoredState parsed on first use (session.py).
    """
    tables: dict[str, list[tuple[int, str, Any, Any]]] = {}
    archived: dict[bytes, tuple[int, bytes]] = {}
    for table, rkey, seq, plain in rows:
        if table == ARCHIVED:
            archived[rkey] = (seq, plain)
            continue
        try:
            row = orjson.loads(plain)
        except orjson.JSONDecodeError:
            raise StoreError(StoreProblem.CORRUPT, "a decrypted row is not JSON") from None
        if not isinstance(row, list) or len(row) != 3 or not isinstance(row[0], str):
            raise StoreError(StoreProblem.CORRUPT, f"a {table} row is malformed")
        tables.setdefault(table, []).append((seq, row[0], row[1], row[2]))
    loaded: Loaded = {}
    for table, items in tables.items():
        items.sort(key=lambda item: item[0])
        loaded[table] = {key: (seq, value, extra) for seq, key, value, extra in items}
    loaded[ARCHIVED] = _archived(loaded.get(SESSIONS, {}), archived, row_key)
    return loaded


def _archived(
    sessions: Mapping[str, tuple[int, Any, Any]],
    rows: Mapping[bytes, tuple[int, bytes]],
    row_key: RowKey,
) -> dict[str, tuple[int, Any, Any]]:
    """The archived states the sessions name, by logical key (a row no session names is
    left out, as before: deleted when its session is)."""
    found: dict[str, tuple[int, Any, Any]] = {}
    for name, (_, value, _) in sessions.items():
        if not isinstance(value, dict) or not isinstance(value.get("previous"), list):
            raise StoreError(StoreProblem.CORRUPT, "a session row is malformed")
        for archive in value["previous"]:
            key = f"{name}\0{archive}"
            row = rows.get(row_key(ARCHIVED, key))
            if row is None:
                raise StoreError(StoreProblem.CORRUPT, "an archived session state is missing")
            found[key] = (row[0], stored_state((key, row[1]), _archived_json), None)
    return found


def _archived_json(source: tuple[str, bytes]) -> Any:
    """The state's JSON from its row (logical key, JSON bytes); INVALID_STATE if malformed."""
    key, plain = source
    try:
        row = orjson.loads(plain)
    except orjson.JSONDecodeError:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, "a stored archived session state is not JSON"
        ) from None
    if not isinstance(row, list) or len(row) != 3 or row[0] != key:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, "a stored archived session state is malformed"
        )
    return row[1]


def document_of(loaded: Loaded) -> dict[str, Any]:
    """The store document the rows hold (the integration's keys, then the sections)."""
    document: dict[str, Any] = {key: value for key, (_, value, _) in loaded.get("doc", {}).items()}
    if "prekeys" not in loaded:
        if any(table != "doc" and rows for table, rows in loaded.items()):
            raise StoreError(StoreProblem.CORRUPT, "the store has data but no Signal identity")
        return document
    requests = {key: value for key, (_, value, _) in loaded.get(REQUESTS, {}).items()}

    def request(key: Any) -> Any:
        try:
            return requests[key]
        except (KeyError, TypeError):
            raise StoreError(StoreProblem.CORRUPT, "a request row is missing") from None

    def values(table: str) -> list[Any]:
        return [value for _, value, _ in loaded.get(table, {}).values()]

    def mapping(table: str) -> dict[str, Any]:
        return {key: value for key, (_, value, _) in loaded.get(table, {}).items()}

    def single(table: str, default: Any) -> Any:
        row = loaded.get(table, {}).get("")
        return default if row is None else row[1]

    inbox = {
        "received": [
            {"digest": digest, "request": request(rkey)}
            for _, digest, rkey in loaded.get("received", {}).values()
        ],
        "accepted": mapping("accepted"),
        "pending": [request(rkey) for _, _, rkey in loaded.get("pending", {}).values()],
        "rejected": mapping("rejected"),
        "group_seals": mapping("seals"),
        "legacy_group_seals": single("legacy_seals", []),
    }
    handled = []
    for _, value, rkey in loaded.get("handled", {}).values():
        if not isinstance(value, list) or len(value) != 2:
            raise StoreError(StoreProblem.CORRUPT, "a history row is malformed")
        handled.append({"request": request(rkey), "processed_at": value[0], "note": value[1]})
    document.update(
        {
            "signal": {
                "format": STATE_FORMAT,
                "prekeys": single("prekeys", None),
                **_sessions(loaded),
                "base_keys_seen": _base_keys(values("base_keys")),
            },
            "inbox": inbox,
            "history": {"requests": handled, "replies": values("replies")},
            "checkpoints": values("checkpoints"),
            "conversations": {
                "history_keys": mapping("history_keys"),
                "group_keys": values("group_keys"),
                "last_devices": mapping("last_devices"),
                "group_epochs": mapping("group_epochs"),
                "named": mapping("named"),
            },
            "uncertain_sends": single("uncertain", []),
            "published_prekeys": single("published", []),
            "evictions": single("evictions", {}),
            "queued_sends": values("queued"),
        }
    )
    book = single("trust_book", None)  # none: a store from before the book moved in
    if isinstance(book, dict):
        document["trust"] = {**book, "devices": values("trust")}
    elif book is not None:
        document["trust"] = book
    return document


def _sessions(loaded: Loaded) -> dict[str, Any]:
    archived = loaded.get(ARCHIVED, {})
    sessions: dict[str, Any] = {}
    last_used: dict[str, Any] = {}
    for name, (_, value, _) in loaded.get(SESSIONS, {}).items():
        if not isinstance(value, dict) or not isinstance(value.get("previous"), list):
            raise StoreError(StoreProblem.CORRUPT, "a session row is malformed")
        previous = []
        for archive in value["previous"]:
            row = archived.get(f"{name}\0{archive}")
            if row is None:
                raise StoreError(StoreProblem.CORRUPT, "an archived session state is missing")
            previous.append(row[1])
        sessions[name] = {
            "trusted_identity": value.get("trusted_identity"),
            "current": value.get("current"),
            "previous": previous,
        }
        last_used[name] = value.get("last_used", 0.0)
    return {"sessions": sessions, "last_used": last_used}


def _base_keys(rows: list[Any]) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for row in rows:
        if not isinstance(row, list) or len(row) != 2:
            raise StoreError(StoreProblem.CORRUPT, "a base key row is malformed")
        seen.setdefault(str(row[0]), []).append(str(row[1]))
    return seen


_GONE = object()  # a row on disk that the data no longer holds: deleted at the next commit


def baseline(loaded: Loaded, extra: Mapping[str, Any], data: AgentData | None) -> Records:
    """The records that `loaded` holds, as objects of `data`: the next commit's baseline."""
    records = Records()
    for kind in KINDS:
        disk = loaded.get(kind.table, {})
        records.next_seq[kind.table] = max((seq for seq, _, _ in disk.values()), default=-1) + 1
        if data is None and kind.table != "doc":
            continue
        source = kind.source(data, extra)  # type: ignore[arg-type]
        entries: dict[str, tuple[object, int, str | None]] = {}
        complete = True
        for key, value in kind.items(source):
            row = disk.get(key)
            if row is None:
                complete = False
                continue
            rkey = row[2] if kind.request is not None else None
            entries[key] = (value, row[0], rkey)
            if rkey is not None and kind.request is not None:
                request = kind.request(value)
                records.request_ids[id(request)] = (request, rkey)
        for key, (seq, _, row_extra) in disk.items():
            if key not in entries:
                complete = False
                rkey = row_extra if kind.request is not None else None
                entries[key] = (_GONE, seq, rkey)
        for _, _, rkey in entries.values():
            if rkey is not None:
                records.refs[rkey] = records.refs.get(rkey, 0) + 1
        records.state[kind.table] = entries
        if complete:
            records.sources[kind.table] = source
    for rkey in loaded.get(REQUESTS, {}):
        records.refs.setdefault(rkey, 0)
    # Unnamed: deleted at the next commit.
    records.unnamed = {rkey for rkey, count in records.refs.items() if count <= 0}
    if data is not None:
        _sessions_baseline(records, loaded, data)
    return records


def _sessions_baseline(records: Records, loaded: Loaded, data: AgentData) -> None:
    disk = loaded.get(SESSIONS, {})
    sessions = data.signal.sessions
    complete = set(disk) == set(sessions)
    for name, record in sessions.items():
        row = disk.get(name)
        if row is None:
            continue
        archived = tuple(str(a) for a in row[1]["previous"])
        if len(archived) != len(record.previous):
            complete = False
            continue
        used = float(data.signal.last_used.get(name, 0.0))
        records.sessions[name] = SessionEntry(record, used, archived, row[0])
    for name in disk:
        if name not in records.sessions:
            archived = tuple(str(a) for a in disk[name][1]["previous"])
            records.sessions[name] = SessionEntry(_GONE_RECORD, -1.0, archived, disk[name][0])
    records.next_seq[SESSIONS] = max((row[0] for row in disk.values()), default=-1) + 1
    if complete:
        records.sessions_source = (sessions, data.signal.last_used)


_GONE_RECORD = SessionRecord()  # never the object of a loaded session: rewritten
