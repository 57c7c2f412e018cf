"""wait_for_messages cursors: opaque, strict, and never skipping a request of the same instant."""

import base64

import pytest

from custom_components.pacerelle.client.agent.views import arrival_ranks
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.llm.cursor import Cursor, CursorError, after, in_order


def request(message_id: str, at: float) -> Request:
    return Request(message_id, "c", "u", "1", "a", True, "text", message_id, None, at)


def test_cursor_round_trip_and_garbage() -> None:
    cursor = Cursor(1764467000.123456, "m-1")
    assert Cursor.decode(cursor.encode()) == cursor
    for text in ("", "%%%", base64.urlsafe_b64encode(b'{"a": 1}').decode(), "WzEsMl0"):
        with pytest.raises(CursorError):
            Cursor.decode(text)
    with pytest.raises(CursorError):  # [true, "m"]: a bool is no time
        Cursor.decode(base64.urlsafe_b64encode(b'[true, "m"]').decode())


def test_one_batch_keeps_arrival_order_and_a_processed_cursor_still_works() -> None:
    # One batch (same instant) accepted as z, a, m; then one later request.
    batch = [request("z", 5.0), request("a", 5.0), request("m", 5.0)]
    later = request("b", 6.0)
    history = ["z", "a", "m", "b"]
    ranks = arrival_ranks(["z", "a", "m", "b"], history)
    ordered = in_order([later, *reversed(batch)], ranks)
    assert [r.message_id for r in ordered] == ["z", "a", "m", "b"]

    cursor = Cursor.of(batch[1])  # read up to "a"
    assert [r.message_id for r in after(ordered, cursor, ranks)] == ["m", "b"]
    # "a" was marked processed: no longer pending, still in the history's order.
    pending = [r for r in ordered if r.message_id != "a"]
    ranks = arrival_ranks([r.message_id for r in pending], history)
    assert [r.message_id for r in after(pending, cursor, ranks)] == ["m", "b"]


def test_a_forgotten_cursor_request_never_hides_its_batch() -> None:
    pending = [request("x", 5.0), request("y", 5.0), request("w", 7.0)]
    ranks = arrival_ranks(["x", "y", "w"], [])
    cursor = Cursor(5.0, "gone")  # fell out of the history
    assert [r.message_id for r in after(pending, cursor, ranks)] == ["x", "y", "w"]
    assert [r.message_id for r in after(pending, Cursor(4.0, "older"), ranks)] == ["x", "y", "w"]
    assert after(pending, Cursor(7.0, "w"), ranks) == []
    assert after(pending, None, ranks) == pending


def test_ranks_put_pending_requests_older_than_the_history_first() -> None:
    ranks = arrival_ranks(["old", "h2"], ["h1", "h2"])
    assert ranks == {"old": 0, "h1": 1, "h2": 2}
