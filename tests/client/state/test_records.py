"""The diff a commit writes (state/records.py): a first commit writes every record, the
same data again writes nothing, a change writes its own row only, a request in both
pending and history is one request row, and a record gone is deleted with its request."""

import asyncio
from dataclasses import replace

import pytest

from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.kinds import REQUESTS
from custom_components.pacerelle.client.state.records import Records, request_key
from custom_components.pacerelle.client.values.agent_data import AgentData, device_key
from custom_components.pacerelle.client.values.requests import Inbox, Request

EXTRA = {"installation": {"agent_id": "agt"}}


def request(message_id: str, text: str = "lights on") -> Request:
    return Request(message_id, "conv", "ana", "1", "agt", True, "text", text, None, 10.0)


@pytest.fixture
async def committed() -> tuple[Records, AgentData]:
    """Records with a first commit of a new agent's data adopted."""
    data = AgentData(await asyncio.to_thread(AgentSignalState.new))
    records = Records()
    first = records.changes(EXTRA, data)
    tables = {table for table, _, _, _ in first.writes}
    assert {"doc", "prekeys"} <= tables
    records.adopt(first, data)
    return records, data


def test_the_same_data_again_writes_nothing(committed: tuple[Records, AgentData]) -> None:
    records, data = committed
    assert not records.changes(EXTRA, data)
    assert not records.changes(dict(EXTRA), replace(data))  # equal, not the same objects


def test_a_change_writes_its_own_row_only(committed: tuple[Records, AgentData]) -> None:
    records, data = committed
    moved = replace(data, conversations=data.conversations.with_device("ana", "conv", "2"))
    changes = records.changes(EXTRA, moved)
    assert [(table, key) for table, key, _, _ in changes.writes] == [
        ("last_devices", device_key("ana", "conv"))
    ]
    assert "2" in changes.writes[0][3]
    assert changes.deletes == []


def test_a_request_held_twice_is_one_request_row(committed: tuple[Records, AgentData]) -> None:
    records, data = committed
    held = request("m1")
    both = replace(
        data,
        inbox=replace(data.inbox, pending={"m1": held}),
        history=data.history.with_request(held),
    )
    changes = records.changes(EXTRA, both)
    request_rows = [row for row in changes.writes if row[0] == REQUESTS]
    assert [row[1] for row in request_rows] == [request_key(held)]
    assert {row[0] for row in changes.writes} == {REQUESTS, "pending", "handled"}
    records.adopt(changes, both)

    gone = replace(both, inbox=Inbox(), history=data.history)
    deleted = records.changes(EXTRA, gone)
    assert (REQUESTS, request_key(held)) in deleted.deletes
    assert {table for table, _ in deleted.deletes} == {REQUESTS, "pending", "handled"}


def test_equal_requests_share_a_key_and_others_do_not() -> None:
    assert request_key(request("m1")) == request_key(request("m1"))
    assert request_key(request("m1")) != request_key(request("m1", "lights off"))
    assert request_key(request("m1")).startswith("m1\0")
