"""What the store gives up when it is over its limits, in which order, and how it is counted:
session records beyond MAX_DEVICES_PER_PEER (least recently used first), then the writer's
`shrink`: history before pending requests before whole sessions, the oldest first."""

import logging

import pytest

from custom_components.pacerelle.client.limits import MAX_DEVICES_PER_PEER
from custom_components.pacerelle.client.relay.frames import InboundMessage
from custom_components.pacerelle.client.signal.engine import decrypt
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.store_bounds import SHRINK_MARGIN, shrink, within_bounds
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.history import History, Reply
from custom_components.pacerelle.client.values.payloads import Content
from custom_components.pacerelle.client.values.requests import Inbox, Request
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")


def _signal_with_devices(count: int) -> AgentSignalState:
    """One real session, recorded under `count` devices of one person, used at times 1..count."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    first = PeerAddress("u-1", "c-1", 1)
    state, _ = decrypt(agent.state, first, human.encrypt(AGENT_NAME, b"hi"))
    record = state.record(first)
    for device in range(1, count + 1):
        state = state.with_record(PeerAddress("u-1", "c-1", device), record, now=float(device))
    return state


def _request(index: int) -> Request:
    message = InboundMessage(
        f"m-{index}", "c-1", "u-1", "1", "a-1", b"x", True, None, (), f"d-{index}"
    )
    return Request.build(message, Content("text", f"request {index}"), float(index))


def _reply(index: int) -> Reply:
    return Reply(f"r-{index}", "c-1", "u-1", "1", "text", f"reply {index}", None, None, index + 0.5)


def _data(signal: AgentSignalState) -> AgentData:
    history = History()
    for index in range(3):
        history = history.with_request(_request(index)).with_reply(_reply(index))
    inbox = Inbox()
    for index in range(10, 13):
        request = _request(index)
        inbox = inbox.with_received(f"d-{index}", request).accept([request.message_id])
    return AgentData(signal, inbox=inbox, history=history)


def test_sessions_beyond_the_per_person_limit_go_least_recently_used_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = _signal_with_devices(MAX_DEVICES_PER_PEER + 2)
    with caplog.at_level(logging.WARNING):
        data = within_bounds(AgentData(signal))
    kept = {PeerAddress("u-1", "c-1", d).storage_name for d in range(3, MAX_DEVICES_PER_PEER + 3)}
    assert set(data.signal.sessions) == kept  # devices 1 and 2, used longest ago, went
    assert data.evictions.sessions == 2
    assert "Evicted 2 session records" in caplog.text
    assert within_bounds(data) == data  # within bounds now: nothing more goes


def test_a_small_excess_costs_the_oldest_history_entry_only() -> None:
    data = _data(_signal_with_devices(2))
    assert len(data.inbox.pending) == 3
    after = shrink(data, 1 - SHRINK_MARGIN)  # one byte to free
    assert [item.request.message_id for item in after.history.requests] == ["m-1", "m-2"]
    assert [reply.message_id for reply in after.history.replies] == ["r-0", "r-1", "r-2"]
    assert after.inbox.pending == data.inbox.pending
    assert after.signal == data.signal
    assert (after.evictions.history_entries, after.evictions.store_shrinks) == (1, 1)


def test_a_large_excess_empties_history_then_pending_then_sessions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = _data(_signal_with_devices(2))
    with caplog.at_level(logging.WARNING):
        after = shrink(data, 10 * 1024 * 1024)
    assert after.history == History()
    assert after.inbox.pending == {}
    assert after.signal.sessions == {}
    counts = after.evictions
    assert (counts.history_entries, counts.pending_requests, counts.sessions) == (6, 3, 2)
    assert counts.store_shrinks == 1
    assert "6 history_entries, 3 pending_requests, 2 sessions" in caplog.text
