"""The sizes remembered between saves (store_bounds.StoredSizes) never let a bound slip.

A size is reused only for the very same (immutable) object: an entry replaced under the
same message id, by a larger one, is measured again, so the bounds evict exactly as if
nothing were remembered.
"""

from dataclasses import replace

import pytest

from custom_components.pacerelle.client import store_bounds, stored_sizes
from custom_components.pacerelle.client.relay.frames import InboundMessage
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.history import History
from custom_components.pacerelle.client.values.payloads import Content
from custom_components.pacerelle.client.values.requests import Inbox, Request

BUDGET = 20_000
COUNT = 10


def _request(number: int, text: str) -> Request:
    message = InboundMessage(f"m{number}", "c1", "u1", "1", "a1", b"", True, None, (), "d")
    return Request.build(message, Content("text", text), float(number))


def _data(text: str) -> AgentData:
    requests = [_request(number, text) for number in range(COUNT)]
    history = History()
    for request in requests:
        history = history.with_request(request)
    inbox = Inbox(pending={request.message_id: request for request in requests})
    return AgentData(AgentSignalState.new(), inbox=inbox, history=history)


@pytest.mark.parametrize("bound", ["MAX_PENDING_BYTES", "MAX_HISTORY_BYTES"])
def test_entries_grown_under_the_same_ids_are_measured_again(
    monkeypatch: pytest.MonkeyPatch, bound: str
) -> None:
    monkeypatch.setattr(store_bounds, bound, BUDGET)
    sizes = StoredSizes()
    small = _data("x")
    assert within_bounds(small, sizes) == small  # measured: well within the budget

    # The same ids, each entry now ten times the budget's share: the oldest must go.
    large = _data("y" * (BUDGET // COUNT))
    remembered = within_bounds(large, sizes)
    assert remembered == within_bounds(large)
    assert remembered != large
    if bound == "MAX_PENDING_BYTES":
        assert len(remembered.inbox.pending) < COUNT
    else:
        assert len(remembered.history.requests) < COUNT


def test_unchanged_entries_are_not_serialized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = StoredSizes()
    data = _data("x")
    within_bounds(data, sizes)
    calls = 0
    measure = stored_sizes.stored_size

    def counting(value: object) -> int:
        nonlocal calls
        calls += 1
        return measure(value)

    monkeypatch.setattr(stored_sizes, "stored_size", counting)
    newer = _request(COUNT, "z")
    inbox = replace(data.inbox, pending={**data.inbox.pending, newer.message_id: newer})
    within_bounds(replace(data, inbox=inbox, history=data.history.with_request(newer)), sizes)
    assert calls == 2  # the new request, pending and in the history; nothing else
