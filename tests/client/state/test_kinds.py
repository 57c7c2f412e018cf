"""The collections kept as records: one table each, never shared, and records whose
logical keys repeat (a request handled twice under one id) kept apart as "#2", "#3"."""

from custom_components.pacerelle.client.state.kinds import KINDS, REQUESTS, TABLES
from custom_components.pacerelle.client.values.history import History
from custom_components.pacerelle.client.values.requests import Request


def request(message_id: str, text: str) -> Request:
    return Request(message_id, "c", "ana", "1", "agt", True, "text", text, None, 1.0)


def test_each_collection_has_a_table_of_its_own() -> None:
    assert len(set(TABLES)) == len(TABLES)
    assert REQUESTS in TABLES
    assert "doc" in {kind.table for kind in KINDS}


def test_repeated_keys_are_kept_apart_in_order() -> None:
    handled = next(kind for kind in KINDS if kind.table == "handled")
    history = History().with_request(request("m1", "a")).with_request(request("m2", "b"))
    history = history.with_request(request("m1", "c"))
    keys = [key for key, _ in handled.items(history.requests)]
    assert keys == ["m1", "m2", "m1#2"]
