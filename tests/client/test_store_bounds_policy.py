"""The bounds' edges and the eviction order, on the data itself (store_bounds.py, state.py)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from custom_components.pacerelle.client.limits import (
    MAX_BATCH,
    MAX_DEVICES_PER_PEER,
    MAX_HISTORY_BYTES,
    MAX_HISTORY_ENTRIES,
    MAX_LAST_DEVICES,
    MAX_PENDING,
    MAX_PENDING_BYTES,
    MAX_RECEIVED,
    MAX_REQUEST_BYTES,
    MAX_SESSION_RECORDS,
    low_water,
)
from custom_components.pacerelle.client.relay.frames import InboundMessage
from custom_components.pacerelle.client.signal.session import PeerAddress, SessionRecord
from custom_components.pacerelle.client.signal.state import AgentSignalState, is_established
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.history import Reply
from custom_components.pacerelle.client.values.payloads import Content
from custom_components.pacerelle.client.values.requests import (
    Request,
    RequestTooLargeError,
    stored_size,
)

FIXTURE = Path(__file__).parents[1] / "data" / "store_v1.json"


def _message(message_id: str = "m1") -> InboundMessage:
    return InboundMessage(message_id, "c1", "u1", "1", "a1", b"", True, None, (), "digest")


def test_a_request_at_the_cap_is_kept_and_one_byte_more_is_refused() -> None:
    overhead = stored_size(Request.build(_message(), Content("text", ""), 1.0).to_json())
    at_cap = Request.build(_message(), Content("text", "x" * (MAX_REQUEST_BYTES - overhead)), 1.0)
    assert stored_size(at_cap.to_json()) == MAX_REQUEST_BYTES
    with pytest.raises(RequestTooLargeError):
        Request.build(_message(), Content("text", "x" * (MAX_REQUEST_BYTES - overhead + 1)), 1.0)
    # Measured as stored: 1/6 of the characters when each one is escaped.
    with pytest.raises(RequestTooLargeError):
        Request.build(_message(), Content("text", "\x01" * (MAX_REQUEST_BYTES // 6 + 1)), 1.0)


def _state() -> tuple[AgentSignalState, SessionRecord, SessionRecord]:
    """A real state (v1 fixture) and an unestablished and an established record of it."""
    document = migrate(json.loads(FIXTURE.read_text())["document"])
    state = AgentSignalState.from_json(document["signal"])
    fresh = next(iter(state.sessions.values()))
    assert fresh.current is not None
    assert not is_established(fresh)
    ratchet = fresh.current.ratchet
    chains = ratchet.receiver_chains * 2  # the peer moved to a new ratchet key: it read us
    established = replace(
        fresh, current=replace(fresh.current, ratchet=replace(ratchet, receiver_chains=chains))
    )
    assert is_established(established)
    return state.without_sessions(list(state.sessions)), fresh, established


def test_sessions_per_person_go_least_valuable_first() -> None:
    empty, fresh, established = _state()
    state = empty.with_record(PeerAddress("owner", "c", 1), established, now=1.0)
    for device in range(2, 2 + MAX_DEVICES_PER_PEER + 5):
        state = state.with_record(PeerAddress("owner", "c", device), fresh, now=float(device))
    state = state.with_record(PeerAddress("other", "c", 1), fresh, now=0.5)  # another person
    evicted = state.sessions_to_evict(per_peer=MAX_DEVICES_PER_PEER, total=MAX_SESSION_RECORDS)
    # The oldest unestablished devices of the owner, never the established one (used first
    # of all), never another person's.
    assert evicted == [PeerAddress("owner", "c", d).storage_name for d in range(2, 8)]


def test_sessions_in_all_go_least_recently_used_first() -> None:
    empty, fresh, _ = _state()
    state = empty
    for person in range(6):
        state = state.with_record(PeerAddress(f"p{person}", "c", 1), fresh, now=10.0 - person)
    assert state.sessions_to_evict(per_peer=MAX_DEVICES_PER_PEER, total=4) == [
        PeerAddress("p5", "c", 1).storage_name,
        PeerAddress("p4", "c", 1).storage_name,
    ]


def test_history_beyond_its_budget_goes_oldest_first_and_is_counted() -> None:
    empty, _, _ = _state()
    text = "y" * (MAX_HISTORY_BYTES // MAX_HISTORY_ENTRIES)  # 50 replies: just over the budget
    replies = tuple(
        Reply(f"r{i}", "c", "u", None, "text", text, None, None, float(i))
        for i in range(MAX_HISTORY_ENTRIES)
    )
    data = AgentData(empty)
    data = replace(data, history=replace(data.history, replies=replies))
    bounded = within_bounds(data)
    evicted = bounded.evictions.history_entries
    assert bounded.history.replies == replies[evicted:]
    # Down to the low-water mark (limits.LOW_WATER_PERCENT), and not one entry further.
    sizes = [stored_size(r.to_json()) for r in replies]
    assert sum(sizes[evicted:]) <= low_water(MAX_HISTORY_BYTES) < sum(sizes[evicted - 1 :])
    assert 5 <= evicted <= 6  # 10% of 50 entries just over the bound


def test_requests_never_handed_over_are_bounded_but_never_a_whole_batch() -> None:
    assert MAX_RECEIVED >= MAX_BATCH  # the batch being handed over is never evicted
    empty, _, _ = _state()
    inbox = AgentData(empty).inbox
    for index in range(MAX_RECEIVED + 6):
        request = Request.build(_message(f"m{index}"), Content("text", "x"), float(index))
        inbox = inbox.with_received("digest", request)
    bounded = within_bounds(AgentData(empty, inbox=inbox))
    assert list(bounded.inbox.received) == [f"m{i}" for i in range(6, MAX_RECEIVED + 6)]
    assert bounded.evictions.received_requests == 6


def _accepted(data: AgentData, first: int, count: int, text: str = "x") -> AgentData:
    """`data` with `count` more requests handed over (one batch), ids m<first>...."""
    inbox = data.inbox
    ids = [f"m{n}" for n in range(first, first + count)]
    for n, message_id in enumerate(ids, first):
        request = Request.build(_message(message_id), Content("text", text), float(n))
        inbox = inbox.with_received("digest", request)
    return replace(data, inbox=inbox.accept(ids))


def test_pending_past_the_bound_evicts_a_batch_down_to_low_water_then_none() -> None:
    empty, _, _ = _state()
    sizes = StoredSizes()
    data = within_bounds(_accepted(AgentData(empty), 0, MAX_PENDING), sizes)
    assert len(data.inbox.pending) == MAX_PENDING  # at the bound: nothing goes
    assert data.evictions.pending_requests == 0
    data = within_bounds(_accepted(data, MAX_PENDING, 1), sizes)  # one over
    kept = low_water(MAX_PENDING)
    evicted = MAX_PENDING + 1 - kept
    assert list(data.inbox.pending) == [f"m{n}" for n in range(evicted, MAX_PENDING + 1)]
    assert data.evictions.pending_requests == evicted
    # The next messages up to the bound evict nothing: one batch per ~50 messages.
    for n in range(MAX_PENDING + 1, MAX_PENDING + 1 + MAX_PENDING - kept):
        data = within_bounds(_accepted(data, n, 1), sizes)
        assert data.evictions.pending_requests == evicted
    assert len(data.inbox.pending) == MAX_PENDING
    data = within_bounds(_accepted(data, 2 * MAX_PENDING + 1 - kept, 1), sizes)
    assert data.evictions.pending_requests == 2 * evicted
    assert len(data.inbox.pending) == kept


def test_a_batch_handed_over_at_the_byte_bound_is_kept_whole() -> None:
    """Only requests older than every one kept go, never one of the batch being accepted
    (the commit that accepts it is the one that evicts, before its ACK_READ): the low-water
    mark of the bytes holds a whole batch of requests at their size limit."""
    assert low_water(MAX_PENDING_BYTES) >= MAX_BATCH * MAX_REQUEST_BYTES
    empty, _, _ = _state()
    overhead = stored_size(Request.build(_message("m0"), Content("text", ""), 1.0).to_json())
    text = "x" * (MAX_REQUEST_BYTES - overhead - 10)  # each request at its limit
    old = MAX_PENDING_BYTES // MAX_REQUEST_BYTES  # just under the bound
    data = within_bounds(_accepted(AgentData(empty), 0, old, text))
    assert data.evictions.pending_requests == 0
    data = within_bounds(_accepted(data, old, MAX_BATCH, text))
    pending = list(data.inbox.pending)
    batch = [f"m{n}" for n in range(old, old + MAX_BATCH)]
    assert pending[-MAX_BATCH:] == batch  # the whole batch kept, in order
    assert pending == [f"m{n}" for n in range(old + MAX_BATCH - len(pending), old + MAX_BATCH)]
    total = sum(stored_size(r.to_json()) for r in data.inbox.pending.values())
    assert total <= low_water(MAX_PENDING_BYTES) < total + MAX_REQUEST_BYTES


def test_last_devices_forget_the_least_recently_heard_from() -> None:
    empty, _, _ = _state()
    conversations = AgentData(empty).conversations.with_device("owner", "c", "1")
    for person in range(MAX_LAST_DEVICES):
        conversations = conversations.with_device(f"invented{person}", "c", "1")
    conversations = conversations.with_device("owner", "c", "1")  # the owner writes again
    bounded = within_bounds(AgentData(empty, conversations=conversations))
    assert len(bounded.conversations.last_devices) == MAX_LAST_DEVICES
    assert bounded.conversations.last_devices["owner|c"] == "1"
    assert "invented0|c" not in bounded.conversations.last_devices
    assert bounded.evictions.last_devices == 1
