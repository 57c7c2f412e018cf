"""Archived session states in the per-record store: kept unparsed at load, parsed on use.

A start-up parses none of them (at the caps, most of the store); a message on an old chain
or a PreKey message of an archived session parses the one it needs. What a damaged row
does: one that does not decrypt, or is missing, is refused at load as before (StoreError);
one that decrypts but does not parse is INVALID_STATE when a message needs it, and
nothing changes (no session, no identity reset).
"""

import sqlite3
from pathlib import Path

import orjson
import pytest

from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.session import (
    PeerAddress,
    StoredState,
    archived_state,
)
from custom_components.pacerelle.client.signal.session_json import record_to_json
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.errors import StoreError, StoreProblem
from custom_components.pacerelle.client.state.kinds import ARCHIVED
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import AgentData, identity_fingerprint
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")
PEER = PeerAddress("usr_1", "cnv_1", 1)
EXTRA = {"installation": {"token": "pit_secret"}, "version": 2}


def _archived_chain() -> tuple[AgentSignalState, bytes]:
    """The agent's state with an established session archived, and a message on it."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    old_session = human.encrypt(AGENT_NAME, b"first")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"second"))
    state, reply = encrypt(state, PEER, b"reply")
    human.decrypt(AGENT_NAME, reply)  # the human's session is established: plain messages
    state, _ = decrypt(state, PEER, old_session)  # a new current session, the other archived
    assert len(state.record(PEER).previous) == 1
    return state, human.encrypt(AGENT_NAME, b"on the old chain")


def _stored(directory: Path, state: AgentSignalState) -> RecordStore:
    store = RecordStore(directory, "agt_1")
    store.create(EXTRA)
    store.load(migrate)
    store.commit(EXTRA, AgentData(state))
    return store


def _reloaded(directory: Path) -> tuple[RecordStore, AgentData]:
    store = RecordStore(directory, "agt_1")
    _, data = store.load(migrate)
    assert data is not None
    return store, data


def test_an_archived_state_parsed_on_first_use_is_the_eager_one(tmp_path: Path) -> None:
    state, frame = _archived_chain()
    _stored(tmp_path, state).close()
    store, loaded = _reloaded(tmp_path)
    (archived,) = loaded.signal.record(PEER).previous
    assert isinstance(archived, StoredState)  # not parsed at load
    assert record_to_json(loaded.signal.record(PEER)) == record_to_json(state.record(PEER))
    assert archived_state(archived) == state.record(PEER).previous[0]
    # A message on the old chain: decrypted with the stored state, as with the eager one.
    lazy_state, lazy_plain = decrypt(loaded.signal, PEER, frame)
    eager_state, eager_plain = decrypt(state, PEER, frame)
    assert lazy_plain == eager_plain == b"on the old chain"
    lazy, eager = lazy_state.record(PEER), eager_state.record(PEER)
    assert lazy.current is not None
    assert eager.current is not None
    # The archived state became current again (the new ratchet keys are random).
    assert lazy.current.alice_base_key == eager.current.alice_base_key
    assert [archived_state(s).alice_base_key for s in lazy.previous] == [
        s.alice_base_key for s in eager.previous
    ]
    # Parsed, used or not, a state is no change to write; the used one is committed.
    assert store.commit(EXTRA, loaded) == 0
    assert store.commit(EXTRA, AgentData(lazy_state)) > 0
    store.close()
    reloaded, again = _reloaded(tmp_path)
    reloaded.close()
    assert again.signal.to_json()["sessions"] == lazy_state.to_json()["sessions"]


def _archived_key(store: RecordStore) -> str:
    (name,) = store._records.sessions
    (archive,) = store._records.sessions[name].archived
    return f"{name}\0{archive}"


def test_an_archived_row_that_does_not_parse_refuses_the_message_and_resets_nothing(
    tmp_path: Path,
) -> None:
    state, frame = _archived_chain()
    store = _stored(tmp_path, state)
    key = _archived_key(store)
    # A row that decrypts (the store key wrote it) but is no session state.
    bad = orjson.dumps([key, {"version": "x"}, None])
    store.file.apply([(ARCHIVED, key, 0, bad)], [])
    store.close()
    store, loaded = _reloaded(tmp_path)  # detected at first use, not at load
    for _ in range(2):  # and again: a failure is not remembered as a parsed state
        with pytest.raises(SignalError) as caught:
            decrypt(loaded.signal, PEER, frame)
        assert caught.value.kind is SignalErrorKind.INVALID_STATE
        assert "archived session state" in str(caught.value)
    assert identity_fingerprint(loaded) == identity_fingerprint(AgentData(state))
    assert store.commit(EXTRA, loaded) == 0  # nothing rewritten, the row left as it is
    store.close()


def _damage(directory: Path, how: str) -> None:
    with sqlite3.connect(directory / "agt_1.db") as connection:
        if how == "flip":  # one byte of its ciphertext: it does not decrypt
            rkey, value = connection.execute(
                "SELECT rkey, value FROM records WHERE tbl = ?", (ARCHIVED,)
            ).fetchone()
            flipped = value[:20] + bytes([value[20] ^ 1]) + value[21:]
            connection.execute("UPDATE records SET value = ? WHERE rkey = ?", (flipped, rkey))
        else:
            connection.execute("DELETE FROM records WHERE tbl = ?", (ARCHIVED,))
    connection.close()


@pytest.mark.parametrize(
    ("how", "problem"), [("flip", StoreProblem.UNDECRYPTABLE), ("delete", StoreProblem.CORRUPT)]
)
def test_a_damaged_or_missing_archived_row_is_refused_at_load(
    tmp_path: Path, how: str, problem: StoreProblem
) -> None:
    state, _ = _archived_chain()
    _stored(tmp_path, state).close()
    _damage(tmp_path, how)
    with pytest.raises(StoreError) as caught:
        RecordStore(tmp_path, "agt_1").load(migrate)
    assert caught.value.problem is problem
