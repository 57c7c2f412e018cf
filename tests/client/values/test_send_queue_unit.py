"""SendQueue on its own: bounds, order, expiry, and its place in the store document."""

import pytest

from custom_components.pacerelle.client.limits import MAX_QUEUED_SEND_BYTES, MAX_QUEUED_SENDS
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.send_queue import (
    QueuedSend,
    QueueFullError,
    SendQueue,
)


def send(number: int, *, expires_at: float = 100.0, size: int = 10) -> QueuedSend:
    return QueuedSend(f"m{number}", "c", "x" * size, 0.0, expires_at)


def test_full_by_count_refuses_the_next_and_keeps_the_oldest() -> None:
    queue = SendQueue()
    for number in range(MAX_QUEUED_SENDS):
        queue.check_room(10)
        queue = queue.added(send(number))
    with pytest.raises(QueueFullError, match=f"{MAX_QUEUED_SENDS} messages"):
        queue.check_room(1)
    assert queue.sends[0].message_id == "m0"  # nothing already queued is evicted


def test_full_by_bytes_at_the_exact_edge() -> None:
    queue = SendQueue().added(send(0, size=MAX_QUEUED_SEND_BYTES - 10))
    queue.check_room(10)  # exactly at the limit fits
    with pytest.raises(QueueFullError, match=f"{MAX_QUEUED_SEND_BYTES} bytes"):
        queue.check_room(11)


def test_expiry_skips_sends_being_written() -> None:
    queue = SendQueue((send(0, expires_at=5.0), send(1, expires_at=50.0)))
    assert [s.message_id for s in queue.expired(5.0)] == ["m0"]
    writing = queue.marked({"m0"}, attempted=True)
    assert writing.expired(60.0) == [writing.sends[1]]  # never dropped mid-write
    assert writing.next_expiry() == 50.0
    assert [s.message_id for s in writing.attempted()] == ["m0"]


def test_the_store_document_keeps_the_queue_in_order_and_old_stores_load_empty() -> None:
    data = AgentData(AgentSignalState.new())
    queued = SendQueue((send(2), QueuedSend("m1", "c", "f", 1.0, 2.0, attempted=True)))
    document = {"installation": {}, **AgentData(data.signal, queued=queued).sections()}
    loaded = AgentData.from_document(document)
    assert loaded is not None
    assert loaded.queued == queued
    del document["queued_sends"]  # a store written before the outbox existed
    older = AgentData.from_document(document)
    assert older is not None
    assert len(older.queued) == 0
