"""Replay seals are bounded with the group keys they belong to (inbox.py, group_key_bounds.py):
kept as long as their key is, evicted with it, and all of them within MAX_GROUP_SEALS, the
keys of untrusted senders going first."""

import base64
from dataclasses import replace

from custom_components.pacerelle.client.limits import (
    MAX_GROUP_KEY_EPOCHS,
    MAX_GROUP_SEALS,
    MAX_SEALS_PER_KEY,
)
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.values.agent_data import AgentData, Conversations
from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.requests import GroupSeal


def _key(sender: str, epoch: int, conversation: str = "c1") -> GroupKey:
    return GroupKey(conversation, f"k-{sender}-{epoch}", epoch, bytes(32), sender, "1")


def _sealed(data: AgentData, key: GroupKey, count: int) -> AgentData:
    inbox = data.inbox
    seals = tuple(base64.b64encode(n.to_bytes(12, "big")).decode() for n in range(count))
    inbox = replace(inbox, group_seals={**inbox.group_seals, key.name: seals})
    return replace(data, inbox=inbox)


def _with_keys(*keys: GroupKey) -> AgentData:
    conversations = Conversations()
    for key in keys:
        conversations = conversations.with_group_key(key)
    return AgentData(AgentSignalState.new(), conversations=conversations)


def test_a_keys_seals_go_with_it() -> None:
    keys = [_key("ana", epoch) for epoch in range(1, MAX_GROUP_KEY_EPOCHS + 2)]
    data = _with_keys(*keys)
    for key in keys:
        data = _sealed(data, key, 3)
    bounded = within_bounds(data)
    assert keys[0].name not in bounded.conversations.group_keys  # the oldest epoch went
    assert bounded.inbox.group_seals.keys() == {key.name for key in keys[1:]}
    assert not bounded.inbox.has_group_seal(
        GroupSeal(keys[0].name, data.inbox.group_seals[keys[0].name][0])
    )


def test_beyond_all_seals_the_untrusted_keys_go_first_with_theirs() -> None:
    ana = _key("ana", 1)
    ghosts = [_key(f"ghost-{n}", 1) for n in range(MAX_GROUP_SEALS // MAX_SEALS_PER_KEY)]
    data = _sealed(_with_keys(ana, *ghosts), ana, MAX_SEALS_PER_KEY)  # ana's, least recent
    for ghost in ghosts:
        data = _sealed(data, ghost, MAX_SEALS_PER_KEY)
    bounded = within_bounds(data, StoredSizes(), lambda key: key.sender_id == "ana")
    seals = bounded.inbox.group_seals
    assert sum(len(items) for items in seals.values()) <= MAX_GROUP_SEALS
    assert ana.name in bounded.conversations.group_keys
    assert len(seals[ana.name]) == MAX_SEALS_PER_KEY
    assert ghosts[0].name not in bounded.conversations.group_keys  # least recently used
    assert ghosts[0].name not in seals
    assert bounded.evictions.group_keys == 1
