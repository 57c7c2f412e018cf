"""Closing a store never closes SQLite's connection under a commit of another thread.

The connection is shared by the executor's threads; closing it while a statement runs
crashes the process (a segmentation fault inside SQLite), as Home Assistant closing beside
a commit in flight would. `RecordFile.close` waits for the commit's mutex, and a commit
that finds its connection closed meanwhile is a StoreError, not a crash.
"""

import threading
from pathlib import Path

import pytest

from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.errors import StoreError, StoreProblem
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import STORE_VERSION, migrate
from custom_components.pacerelle.client.values.agent_data import AgentData

EXTRA = {"installation": {"token": "t"}, "version": STORE_VERSION}


def _loaded(directory: Path) -> RecordStore:
    store = RecordStore(directory, "agt_1")
    store.create(EXTRA)
    store.close()
    store = RecordStore(directory, "agt_1")
    store.load(migrate)
    store.commit(EXTRA, AgentData(AgentSignalState.new()))
    return store


def test_close_waits_for_the_commit_in_flight(tmp_path: Path) -> None:
    store = _loaded(tmp_path)
    file = store.file
    connection = file._connection
    assert connection is not None
    with file._mutex:  # a commit of another thread runs
        closer = threading.Thread(target=file.close)
        closer.start()
        closer.join(0.2)
        assert closer.is_alive()  # close waits for it
        connection.execute("SELECT count(*) FROM records").fetchone()  # still open
    closer.join(30)
    assert not closer.is_alive()
    assert file._connection is None


def test_a_commit_whose_connection_was_closed_meanwhile_is_a_store_error(tmp_path: Path) -> None:
    store = _loaded(tmp_path)
    file = store.file
    connection = file._open_connection()
    file.close()
    with pytest.raises(StoreError) as caught:
        file._still_open(connection)
    assert caught.value.problem is StoreProblem.MISSING


def test_commits_and_a_close_racing_in_threads_end_without_a_crash(tmp_path: Path) -> None:
    store = _loaded(tmp_path)
    data = store.data
    assert data is not None
    errors: list[BaseException] = []

    def commits() -> None:
        for _ in range(200):
            try:
                store.file.apply([], [])
                store.file.checkpoint()
            except StoreError as err:  # closed meanwhile: refused, never a crash
                errors.append(err)

    worker = threading.Thread(target=commits)
    worker.start()
    for _ in range(50):
        store.file.close()
    worker.join(60)
    assert not worker.is_alive()
    assert all(isinstance(err, StoreError) for err in errors)
    store.file.close()
