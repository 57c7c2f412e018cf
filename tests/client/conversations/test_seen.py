"""The conversations the agent has seen, from what it keeps: a direct one is addressed to
the person, a group to `group:<id>` with its members of now, the agent never among them,
the most recently active first and groups known only by a key last."""

import asyncio
from dataclasses import replace

import pytest

from custom_components.pacerelle.client.conversations.seen import (
    conversation_recipient,
    known_conversation,
    named_recipients,
    seen_conversations,
)
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


class Whose:
    agent_id = "agt"
    owner_id = "own"
    conversation_id = "mine"


def test_a_named_conversation_reaches_its_kept_recipient_after_its_history_rolled_off(
    signal: AgentSignalState,
) -> None:
    """Nothing of `family` in the history any more: the kept record alone says it is a
    group; the agent's own conversation is its owner's, seen or not; of an unknown one the
    agent knows no recipient (a send to it is refused: outbox/sender.py)."""
    data = AgentData(signal)
    named = replace(data.conversations, named={"family": "group:family", "ana": "usr_ana"})
    data = replace(data, conversations=named)
    assert conversation_recipient(data, Whose(), "family") == "group:family"
    assert conversation_recipient(data, Whose(), "ana") == "usr_ana"
    assert conversation_recipient(data, Whose(), "mine") == "own"
    assert conversation_recipient(data, Whose(), "unknown") is None
    family = known_conversation(data, Whose(), "family")
    assert family is not None
    assert (family.is_group, family.member_ids, family.recipient) == (True, (), "group:family")
    mine = known_conversation(data, Whose(), "mine")
    assert mine is not None
    assert (mine.is_group, mine.member_ids, mine.recipient) == (False, ("own",), "own")
    assert known_conversation(data, Whose(), "unknown") is None


def test_named_recipients_keep_what_is_kept_check_what_the_host_knew_and_see_the_rest(
    signal: AgentSignalState,
) -> None:
    history = History().with_request(request("m1", "club", "bo", 10.0, "group:club"))
    data = AgentData(signal, history=history)
    data = replace(data, conversations=replace(data.conversations, named={"kept": "usr_x"}))
    known = {
        "kept": "usr_other",  # what the store keeps already wins
        "forged": "group:elsewhere",  # another conversation's group: never kept
        "direct": "usr_ana",  # a person: kept
        "bad": "\x00",  # no relay id
    }
    named = ["kept", "forged", "direct", "bad", "club", "mine", "nobody"]
    assert named_recipients(data, Whose(), named, known) == {
        "club": "group:club",  # seen now
        "direct": "usr_ana",
        "kept": "usr_x",
    }  # the agent's own is always known; an unseen one with nothing known is left out
