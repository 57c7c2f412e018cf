"""The conversations the agent has seen, from what it keeps: a direct one is addressed to
the person, a group to `group:<id>` with its members of now, the agent never among them,
the most recently active first and groups known only by a key last."""

import asyncio

import pytest

from custom_components.pacerelle.client.conversations.seen import seen_conversations
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.history import History, Reply
from custom_components.pacerelle.client.values.requests import Request


def request(message_id: str, conversation: str, sender: str, at: float, to: str) -> Request:
    return Request(message_id, conversation, sender, "1", to, True, "text", "hi", None, at)


@pytest.fixture
async def signal() -> AgentSignalState:
    return await asyncio.to_thread(AgentSignalState.new)


def test_conversations_are_listed_as_a_host_addresses_them(signal: AgentSignalState) -> None:
    history = (
        History()
        .with_request(request("m1", "direct", "ana", 10.0, "agt"))
        .with_request(request("m2", "family", "bo", 30.0, "group:family"))
        .with_reply(Reply("r1", "direct", "ana", "1", "text", "ok", "m1", None, 20.0))
    )
    data = AgentData(signal, history=history)
    key = GroupKey("club", "k1", 1, b"k" * 32, "cy", "1")
    data = AgentData(signal, history=history, conversations=data.conversations.with_group_key(key))
    seen = seen_conversations(data, "agt")
    assert [c.conversation_id for c in seen] == ["family", "direct", "club"]
    family, direct, club = seen
    assert (family.is_group, family.recipient, family.member_ids) == (
        True,
        "group:family",
        ("bo",),
    )
    assert (direct.is_group, direct.recipient, direct.member_ids) == (False, "ana", ("ana",))
    assert direct.last_active_at == 20.0
    assert club.last_active_at is None
    assert club.is_group
    assert "agt" not in {member for c in seen for member in c.member_ids}
