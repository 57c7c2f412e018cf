"""scripts/bench --state: an agent's store grown through the real store keeps what the
person's device talks to (tests/bench/seeded.py)."""

from dataclasses import replace
from pathlib import Path

import pytest

from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.store.agent_store import STORE_DIRECTORY
from tests.bench.seeded import held, seed
from tests.helpers.reference_peer import reference_peer_available
from tests.helpers.store_states import SHAPES, model_session, request

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")
EXTRA = {"installation": {"token": "pit_secret"}, "version": 2, "generation": 7}
AGENT = "agt_seeded"
PERSON = PeerAddress("usr_demo", "cnv_real", 1)


def _store_of(config: Path, data: AgentData) -> None:
    folder = config.joinpath(".storage", *STORE_DIRECTORY)
    folder.mkdir(parents=True)
    store = RecordStore(folder, AGENT)
    store.create(EXTRA)
    store.load(migrate)
    store.commit(EXTRA, data)
    store.close()


def _agent() -> AgentData:
    """An agent's data: its identity, the person's session (at the person's address, not
    one of the invented ones), a request accepted."""
    data, record = model_session()
    [name] = data.signal.sessions
    signal = data.signal.without_sessions([name]).with_record(PERSON, record, now=2e9)
    first = request(10**6, 20, conversation=PERSON.conversation_id)  # not an invented id
    inbox = data.inbox.with_received("e" * 64, first).accept([first.message_id])
    return replace(data, signal=signal, inbox=inbox)


def test_the_busy_state_is_added_beside_the_agents_own_data(tmp_path: Path) -> None:
    data = _agent()
    _store_of(tmp_path, data)

    seeded = seed(tmp_path, AGENT, "busy")

    store = RecordStore(tmp_path.joinpath(".storage", *STORE_DIRECTORY), AGENT)
    extra, after = store.load(migrate)
    store.close()
    assert after is not None
    assert extra["generation"] == 7  # the restore detection sees the same store
    assert extra["installation"] == EXTRA["installation"]
    assert after.signal.prekeys == data.signal.prekeys
    assert after.signal.sessions[PERSON.storage_name] == data.signal.record(PERSON)
    [first] = data.inbox.pending
    assert first in after.inbox.pending
    assert after.inbox.accepted[first] == data.inbox.accepted[first]
    shape = SHAPES["busy"]
    assert seeded.sessions == 1 + shape.sessions
    assert seeded.pending == 1 + shape.pending
    assert seeded.group_keys == shape.group_keys
    assert seeded == held(tmp_path, AGENT)


def test_a_session_at_an_invented_address_is_never_overwritten(tmp_path: Path) -> None:
    data, _ = model_session()  # its session is at usr_0 in cnv_0, the first invented one
    _store_of(tmp_path, data)
    before = held(tmp_path, AGENT)
    with pytest.raises(RuntimeError, match="one of its sessions"):
        seed(tmp_path, AGENT, "busy")
    assert held(tmp_path, AGENT) == before
