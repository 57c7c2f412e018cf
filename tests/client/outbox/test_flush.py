"""The queue's moves under the agent's lock (outbox/flush.py), on a real store: a send
caught mid-write at a crash becomes uncertain and is never written again, an expired one
is dropped and told, the user's clear leaves one being written, and a flush offline
writes nothing. Each outcome is committed before it is reported."""

import asyncio
from pathlib import Path

import pytest

from custom_components.pacerelle.client.agent_core import AgentConfig, AgentCore, AgentHooks
from custom_components.pacerelle.client.outbox.confirmations import Outbox
from custom_components.pacerelle.client.outbox.flush import CLEARED, EXPIRED, QueuedSends
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.agent_store import AgentStore
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.history import UNCERTAIN
from custom_components.pacerelle.client.values.send_queue import QueuedSend, SendQueue
from tests.helpers.record_stores import INSTALLATION, new_store, reopened, to_thread

CONFIG = AgentConfig("agt", "owner", "conv", "http://127.0.0.1:1")


class Statuses(list[tuple[str, str]]):
    def told(self, message_id: str, _conversation_id: str, status: str) -> None:
        self.append((message_id, status))


def queued(message_id: str, *, expires_at: float = 1e12, attempted: bool = False) -> QueuedSend:
    return QueuedSend(message_id, "conv", '{"type":"send"}', 1.0, expires_at, attempted)


@pytest.fixture
async def signal() -> AgentSignalState:
    return await asyncio.to_thread(AgentSignalState.new)


def sends_on(
    store: AgentStore, data: AgentData, statuses: Statuses
) -> tuple[AgentCore, QueuedSends]:
    hooks = AgentHooks(run_blocking=to_thread, deliver=lambda _r: None, send_status=statuses.told)
    core = AgentCore(CONFIG, hooks, data, dict(INSTALLATION), store=store)
    return core, QueuedSends(core, Outbox())


async def test_a_send_caught_mid_write_becomes_uncertain(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    statuses = Statuses()
    data = AgentData(signal, queued=SendQueue((queued("m1", attempted=True), queued("m2"))))
    async with new_store(tmp_path) as store:
        core, sends = sends_on(store, data, statuses)
        async with core.lock:
            await sends.recover()
        assert statuses == [("m1", UNCERTAIN)]
    _, loaded = await reopened(tmp_path)
    assert loaded is not None
    assert [send.message_id for send in loaded.queued.sends] == ["m2"]
    assert [send.message_id for send in loaded.uncertain] == ["m1"]


async def test_expired_sends_are_dropped_and_told(tmp_path: Path, signal: AgentSignalState) -> None:
    statuses = Statuses()
    data = AgentData(signal, queued=SendQueue((queued("old", expires_at=5.0), queued("new"))))
    async with new_store(tmp_path) as store:
        core, sends = sends_on(store, data, statuses)
        async with core.lock:
            await sends.expire()
            await sends.expire()  # nothing more to drop: told once
        assert statuses == [("old", EXPIRED)]
        assert [send.message_id for send in core.data.queued.sends] == ["new"]
    _, loaded = await reopened(tmp_path)
    assert loaded is not None
    assert [send.message_id for send in loaded.queued.sends] == ["new"]


async def test_clear_leaves_a_send_being_written(tmp_path: Path, signal: AgentSignalState) -> None:
    statuses = Statuses()
    data = AgentData(
        signal, queued=SendQueue((queued("a"), queued("writing", attempted=True), queued("b")))
    )
    async with new_store(tmp_path) as store:
        core, sends = sends_on(store, data, statuses)
        async with core.lock:
            assert await sends.clear() == 2
        assert sorted(statuses) == [("a", CLEARED), ("b", CLEARED)]
        assert [send.message_id for send in core.data.queued.sends] == ["writing"]


async def test_a_flush_offline_writes_nothing_and_keeps_the_queue(
    tmp_path: Path, signal: AgentSignalState
) -> None:
    statuses = Statuses()
    data = AgentData(signal, queued=SendQueue((queued("m1"), queued("m2"))))
    async with new_store(tmp_path) as store:
        core, sends = sends_on(store, data, statuses)
        async with core.lock:
            await sends.flush()
        assert statuses == []
        assert [send.message_id for send in core.data.queued.sends] == ["m1", "m2"]
        assert not any(send.attempted for send in core.data.queued.sends)
        assert core.data is data
