"""The agent's one writer (agent_core.py): a commit is durable before its data is current,
a failed one leaves the data as it was, an unchanged one writes nothing, and the trust
door's decisions are committed with the data."""

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from custom_components.pacerelle.client.agent_core import (
    AgentConfig,
    AgentCore,
    AgentHooks,
    Bound,
    ConnectionState,
)
from custom_components.pacerelle.client.errors import PacerelleConnectionError
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.agent_store import AgentStore
from custom_components.pacerelle.client.trust.door import TrustDoor
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.trust_book import TrustBook, TrustState
from tests.helpers.record_stores import INSTALLATION, new_store, reopened, to_thread

CONFIG = AgentConfig("agt", "owner", "conv", "http://127.0.0.1:1")
KEY = b"\x05" + b"k" * 32


class CountedStore:
    """The real store, with its commits counted and the next one failing on demand."""

    def __init__(self, store: AgentStore) -> None:
        self.store = store
        self.commits = 0
        self.fail_next = False

    async def commit(
        self, extra: dict[str, Any], data: AgentData, bound: Bound | None = None
    ) -> AgentData:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        self.commits += 1
        return await self.store.commit(extra, data, bound)

    def mark(self, mark: str, trusted: bool) -> None:
        self.store.mark(mark, trusted)


def core_on(store: CountedStore, data: AgentData, trust: TrustDoor | None = None) -> AgentCore:
    hooks = AgentHooks(run_blocking=to_thread, deliver=lambda _request: None)
    return AgentCore(CONFIG, hooks, data, dict(INSTALLATION), trust, store=store)


@pytest.fixture
async def signal() -> AgentSignalState:
    return await asyncio.to_thread(AgentSignalState.new)


async def test_a_commit_is_durable_and_then_current(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    async with new_store(tmp_path) as real:
        core = core_on(CountedStore(real), AgentData(signal))
        changed = replace(core.data, published_prekeys=frozenset({5, 9}))
        async with core.lock:
            await core.commit(changed)
        assert core.data.published_prekeys == {5, 9}
    document, loaded = await reopened(tmp_path)
    assert loaded is not None
    assert loaded.published_prekeys == {5, 9}
    assert document["installation"] == INSTALLATION["installation"]


async def test_a_failed_commit_keeps_the_data(tmp_path: Path, signal: AgentSignalState) -> None:
    async with new_store(tmp_path) as real:
        store = CountedStore(real)
        core = core_on(store, AgentData(signal))
        before = core.data
        store.fail_next = True
        async with core.lock:
            with pytest.raises(OSError, match="disk full"):
                await core.commit(replace(before, published_prekeys=frozenset({1})))
        assert core.data is before


async def test_the_data_as_it_is_is_not_written_again(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    async with new_store(tmp_path) as real:
        store = CountedStore(real)
        core = core_on(store, AgentData(signal))
        async with core.lock:
            await core.commit(replace(core.data, published_prekeys=frozenset({1})))
            await core.commit(core.data)
        assert store.commits == 1


async def test_a_trust_decision_is_committed_with_the_data(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    book = TrustBook.unverified([("ana", "1", KEY)], 1.0)
    door = TrustDoor("owner", book)
    async with new_store(tmp_path) as real:
        core = core_on(CountedStore(real), AgentData(signal, trust=book), door)
        door.decide("ana", "1", TrustState.TRUSTED, key=KEY)
        await door.keep()
        assert core.data.trust is door.book
    _, loaded = await reopened(tmp_path)
    assert loaded is not None
    assert isinstance(loaded.trust, TrustBook)
    kept = loaded.trust.get("ana", "1")
    assert kept is not None
    assert kept.state is TrustState.TRUSTED


async def test_state_changes_are_told_once_and_no_write_goes_out_unconnected(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    told: list[None] = []
    async with new_store(tmp_path) as real:
        hooks = AgentHooks(
            run_blocking=to_thread,
            deliver=lambda _request: None,
            status_changed=lambda: told.append(None),
        )
        core = AgentCore(CONFIG, hooks, AgentData(signal), {}, store=CountedStore(real))
        core.set_state(ConnectionState.CONNECTING)
        core.set_state(ConnectionState.CONNECTING)
        core.set_state(ConnectionState.STOPPED)
        assert len(told) == 2
        with pytest.raises(PacerelleConnectionError):
            await core.write("{}")
