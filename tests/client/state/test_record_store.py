"""The per-record store (client/state/): what a commit writes, what a load refuses."""

import sqlite3
from dataclasses import fields, replace
from pathlib import Path

import pytest

from custom_components.pacerelle.client.signal.session import SessionRecord
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.assembly import document_of
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.errors import StoreError, StoreProblem
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import SECTIONS, AgentData, Conversations
from custom_components.pacerelle.client.values.history import HandledRequest, History, Reply
from custom_components.pacerelle.client.values.requests import Inbox
from custom_components.pacerelle.client.values.trust_book import TrustBook
from tests.helpers.reference_peer import reference_peer_available
from tests.helpers.store_states import Shape, grown, model_session, request

FIRST = "rowid = (SELECT min(rowid) FROM records)"
needs_peer = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")
EXTRA = {"installation": {"token": "pit_secret"}, "version": 2}
SHAPE = Shape(
    sessions=5, archived=3, pending=20, history=10, group_keys=30, queued=3, checkpoints=2
)


@pytest.fixture(scope="module")
def data() -> AgentData:
    base, model = model_session()
    return grown(base, model, SHAPE)


def _store(directory: Path, name: str = "agt_1") -> RecordStore:
    return RecordStore(directory, name)


def _created(directory: Path, name: str = "agt_1") -> None:
    store = _store(directory, name)
    store.create(EXTRA)
    store.close()


def _loaded(directory: Path, name: str = "agt_1") -> tuple[RecordStore, AgentData]:
    store = _store(directory, name)
    _, data = store.load(migrate)
    assert data is not None
    return store, data


def _read(directory: Path) -> RecordStore:
    """The store as a start loads it, closed again (its data and document kept)."""
    store, _ = _loaded(directory)
    store.close()
    return store


def _orders(data: AgentData) -> list[list[str]]:
    """The order of every ordered part (the least recent first: eviction order)."""
    return [
        list(data.signal.sessions),
        list(data.inbox.pending),
        list(data.inbox.accepted),
        list(data.conversations.group_keys),
        list(data.conversations.history_keys),
        list(data.conversations.group_epochs),
        list(data.inbox.group_seals),
        [item.request.message_id for item in data.history.requests],
        [reply.message_id for reply in data.history.replies],
        [send.message_id for send in data.queued.sends],
        list(data.checkpoints.items),
    ]


def _rows(directory: Path, name: str = "agt_1") -> int:
    with sqlite3.connect(directory / f"{name}.db") as connection:
        (count,) = connection.execute("SELECT count(*) FROM records").fetchone()
    connection.close()
    return int(count)


@needs_peer
def test_a_commit_writes_only_what_changed_and_loads_back(tmp_path: Path, data: AgentData) -> None:
    store = _store(tmp_path)
    store.create(EXTRA)
    store.load(migrate)
    written = store.commit(EXTRA, data)
    assert written > 100
    assert store.commit(EXTRA, data) == 0  # nothing changed: nothing written
    # One request marked processed: the pending row goes, one history row changes.
    message_id = next(reversed(data.inbox.pending))
    processed = replace(
        data,
        inbox=data.inbox.processed(message_id),
        history=data.history.with_processed(message_id, 5.0, "done"),
    )
    assert store.commit(EXTRA, processed) == 2
    # A reply: one row.
    reply = Reply("rep_new", "cnv_0", "usr_0", None, "text", "hi", None, None, 9.0)
    replied = replace(processed, history=processed.history.with_reply(reply))
    assert store.commit(EXTRA, replied) == 1
    # A session used: its row only, never its archived states.
    peer = next(iter(replied.signal.sessions))
    record = replied.signal.sessions[peer]
    used = replace(
        replied,
        signal=replace(
            replied.signal,
            sessions={**replied.signal.sessions, peer: replace(record)},
            last_used={**replied.signal.last_used, peer: 99.0},
        ),
    )
    assert len(record.previous) == SHAPE.archived
    assert store.commit(EXTRA, used) == 1
    # A conversation named by the host: one row, kept as it is.
    named = replace(used.conversations, named={"cnv_0": "group:cnv_0"})
    used = replace(used, conversations=named)
    assert store.commit(EXTRA, used) == 1
    store.close()

    again, loaded = _loaded(tmp_path)
    assert loaded.sections() == used.sections()
    assert loaded.conversations.named == {"cnv_0": "group:cnv_0"}
    assert _orders(loaded) == _orders(used)  # what is evicted first stays first
    assert again.commit(EXTRA, loaded) == 0  # a start writes nothing it did not change
    again.close()


@needs_peer
def test_a_request_pending_and_in_history_is_stored_once(tmp_path: Path, data: AgentData) -> None:
    store = _store(tmp_path)
    store.create(EXTRA)
    store.load(migrate)
    big = request(99_999, 200_000)
    one = replace(
        data,
        inbox=replace(data.inbox, pending={**data.inbox.pending, big.message_id: big}),
        history=data.history.with_request(big),
    )
    store.commit(EXTRA, one)
    store.close()
    size = (tmp_path / "agt_1.db").stat().st_size
    assert size < 2 * 200_000  # once, not twice


@needs_peer
def test_a_failed_write_keeps_the_disk_and_the_baseline(
    tmp_path: Path, data: AgentData, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    store.create(EXTRA)
    store.load(migrate)
    store.commit(EXTRA, data)
    rows = _rows(tmp_path)
    later = replace(data, inbox=data.inbox.processed(next(iter(data.inbox.pending))))

    def failing(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store.file, "apply", failing)
    with pytest.raises(OSError, match="disk full"):
        store.commit(EXTRA, later)
    monkeypatch.undo()
    assert _rows(tmp_path) == rows
    # The baseline did not move: written now (the pending row and its request's row).
    assert store.commit(EXTRA, later) == 2
    store.close()
    assert _read(tmp_path).document() == {**EXTRA, **later.sections()}


@needs_peer
def test_a_store_of_the_earlier_format_migrates_and_a_killed_migration_is_redone(
    tmp_path: Path, data: AgentData
) -> None:
    document = {**EXTRA, **data.sections()}
    EncryptedFile(tmp_path, "agt_1").create(document)
    # A migration killed half-way: its partial database is left beside the .enc file.
    (tmp_path / "agt_1.db.partial").write_bytes(b"half a database")
    store, loaded = _loaded(tmp_path)
    assert loaded.sections() == data.sections()
    assert store.extra == EXTRA
    assert not (tmp_path / "agt_1.enc").exists()
    assert not (tmp_path / "agt_1.db.partial").exists()
    assert store.commit(EXTRA, loaded) == 0
    store.close()
    assert {k: v for k, v in _read(tmp_path).document().items() if k in SECTIONS} == {
        k: v for k, v in document.items() if k in SECTIONS
    }


def test_a_killed_migration_after_the_rename_finishes_it(tmp_path: Path) -> None:
    EncryptedFile(tmp_path, "agt_1").create(EXTRA)
    store = _store(tmp_path)
    store.load(migrate)
    store.close()
    EncryptedFile(tmp_path, "agt_1").write({**EXTRA, "stale": True})  # the .enc still there
    store = _store(tmp_path)
    assert store.load(migrate)[0] == EXTRA  # the complete database wins; .enc removed
    store.close()
    assert not (tmp_path / "agt_1.enc").exists()


def _damage(tmp_path: Path, sql: str) -> None:
    with sqlite3.connect(tmp_path / "agt_1.db") as connection:
        if sql == "flip":
            rkey, value = connection.execute(
                "SELECT rkey, value FROM records WHERE tbl = 'doc'"
            ).fetchone()
            flipped = value[:20] + bytes([value[20] ^ 1]) + value[21:]
            connection.execute("UPDATE records SET value = ? WHERE rkey = ?", (flipped, rkey))
        else:
            connection.execute(sql)
    connection.close()


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        # A row that does not decrypt (one byte of its value flipped).
        ("flip", StoreProblem.UNDECRYPTABLE),
        # A row moved to another key, or to another position.
        (f"UPDATE records SET rkey = x'{'ab' * 16}' WHERE {FIRST}", StoreProblem.UNDECRYPTABLE),
        (f"UPDATE records SET seq = seq + 1 WHERE {FIRST}", StoreProblem.UNDECRYPTABLE),
        ("DROP TABLE meta", StoreProblem.CORRUPT),
    ],
)
def test_a_damaged_row_is_refused(tmp_path: Path, sql: str, problem: StoreProblem) -> None:
    _created(tmp_path)
    _damage(tmp_path, sql)
    with pytest.raises(StoreError) as caught:
        _store(tmp_path).load(migrate)
    assert caught.value.problem is problem


def test_a_row_from_another_agents_store_does_not_decrypt(tmp_path: Path) -> None:
    _created(tmp_path, "agt_1")
    _created(tmp_path, "agt_2")
    # The same key for both (a copied key file): only the agent's name in the aad tells.
    (tmp_path / "agt_2.key").write_bytes((tmp_path / "agt_1.key").read_bytes())
    with sqlite3.connect(tmp_path / "agt_2.db") as connection:
        connection.execute("ATTACH ? AS one", (str(tmp_path / "agt_1.db"),))
        connection.execute("DELETE FROM records")
        connection.execute("INSERT INTO records SELECT * FROM one.records")
    connection.close()
    with pytest.raises(StoreError) as caught:
        _store(tmp_path, "agt_2").load(migrate)
    assert caught.value.problem is StoreProblem.UNDECRYPTABLE


def test_a_damaged_file_a_missing_key_and_a_missing_database(tmp_path: Path) -> None:
    _created(tmp_path)
    (tmp_path / "agt_1.db").write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError) as caught:
        _store(tmp_path).load(migrate)
    assert caught.value.problem is StoreProblem.CORRUPT
    (tmp_path / "agt_1.key").unlink()
    with pytest.raises(StoreError) as caught:
        _store(tmp_path).load(migrate)
    assert caught.value.problem is StoreProblem.KEY_MISSING
    _created(tmp_path, "agt_3")
    (tmp_path / "agt_3.db").unlink()
    with pytest.raises(StoreError) as caught:
        _store(tmp_path, "agt_3").load(migrate)
    assert caught.value.problem is StoreProblem.MISSING
    assert (tmp_path / "agt_3.key").exists()  # never a new key over a lost store


def test_one_store_is_opened_by_one_holder(tmp_path: Path) -> None:
    first = _store(tmp_path)
    first.create(EXTRA)
    first.load(migrate)
    with pytest.raises(StoreError, match="open in another process") as caught:
        _store(tmp_path).load(migrate)
    assert caught.value.problem is StoreProblem.LOCKED  # not damaged: held
    first.close()
    again = _store(tmp_path)
    assert again.load(migrate)[0] == EXTRA  # released (and by a crash: flock)
    again.close()


def test_files_are_private(tmp_path: Path) -> None:
    store = _store(tmp_path / "pacerelle")
    store.create(EXTRA)
    store.load(migrate)
    store.save_keys({"generation": 3})
    assert (tmp_path / "pacerelle").stat().st_mode & 0o777 == 0o700
    for path in (tmp_path / "pacerelle").iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path.name
        assert b"pit_secret" not in path.read_bytes()
    store.close()


def test_every_field_of_the_data_has_its_records() -> None:
    """A field added to the data without its records in client/state/kinds.py would be
    lost at the next load: the fields the records cover, as of now."""
    covered = {
        AgentData: {
            "handed_over",  # kept outside the records, beside the witness (store.py)
            "signal",
            "inbox",
            "history",
            "checkpoints",
            "conversations",
            "uncertain",
            "published_prekeys",
            "evictions",
            "queued",
            "trust",
        },
        TrustBook: {"devices", "first_use"},
        AgentSignalState: {"prekeys", "sessions", "base_keys_seen", "last_used"},
        Inbox: {"received", "accepted", "pending", "rejected", "group_seals", "legacy_seals"},
        History: {"requests", "replies"},
        HandledRequest: {"request", "processed_at", "note"},
        Conversations: {"history_keys", "group_keys", "last_devices", "group_epochs", "named"},
        SessionRecord: {"trusted_identity", "current", "previous"},
    }
    for kind, names in covered.items():
        assert {f.name for f in fields(kind)} == names, kind.__name__
    book = {"": (0, {"first_use": True}, None)}
    assert set(document_of({"prekeys": {"": (0, {}, None)}, "trust_book": book})) == set(
        SECTIONS
    ) - {"handed_over"}
    # Without the book's row: a store from before the book moved in (trust/kept.py).
    assert "trust" not in document_of({"prekeys": {"": (0, {}, None)}})
