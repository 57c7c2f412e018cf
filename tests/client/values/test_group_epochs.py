"""The group membership rule (client/values/group_epochs.py), on stored conversations."""

from custom_components.pacerelle.client.values.agent_data import Conversations
from custom_components.pacerelle.client.values.group_epochs import GroupEpoch
from custom_components.pacerelle.client.values.groups import GroupKey

GROUP = "c-family"
AGENT = "agt_1"


def key(sender: str, epoch: int, device: str = "1", conversation: str = GROUP) -> GroupKey:
    return GroupKey(conversation, f"k-{sender}-{device}-{epoch}", epoch, bytes(32), sender, device)


def learn(conversations: Conversations, *keys: GroupKey) -> Conversations:
    """One fetch that brings `keys`, as crypto_jobs._learn_group_keys learns them."""
    for item in keys:
        conversations = conversations.with_group_key(item)
    return conversations.with_group_keys_learned(GROUP, [item.name for item in keys])


def state(conversations: Conversations) -> tuple[int, frozenset[str]]:
    epoch = conversations.group_epoch(GROUP)
    assert epoch is not None
    return epoch.epoch, conversations.group_members(GROUP, AGENT)


def family() -> Conversations:
    """Ana, Ben and Eve at epoch 1; Ben removed at epoch 2."""
    first = learn(Conversations(), key("ana", 1), key("ben", 1), key("eve", 1))
    assert state(first) == (1, {"ana", "ben", "eve"})
    second = learn(first, key("ana", 2), key("eve", 2))
    assert state(second) == (2, {"ana", "eve"})
    return second


def test_a_removed_member_alone_never_moves_the_group_nor_rejoins_it() -> None:
    conversations = family()
    for epoch in (99, 3, 2):  # an epoch of his own, the next one, the current one
        conversations = learn(conversations, key("ben", epoch, device="1"))
        assert state(conversations) == (2, {"ana", "eve"})
    assert not conversations.opens_with(key("ben", 99).name)  # an epoch never entered
    assert conversations.opens_with(key("ben", 1).name)  # history still opens
    sealing = conversations.sealing_group_key(GROUP)
    assert sealing is not None
    assert (sealing.epoch, sealing.sender_id) == (2, "ana")
    # His epoch-3 key, sent before, does not make him a founder when Ana moves on to 3.
    conversations = learn(conversations, key("ana", 3), key("eve", 3))
    assert state(conversations) == (3, {"ana", "eve"})


def test_a_member_moves_the_group_and_the_change_brings_who_joins() -> None:
    conversations = family()
    # Ben is added back and Dave joins: their keys come with the change (one fetch).
    conversations = learn(
        conversations, key("ana", 3), key("eve", 3), key("ben", 3), key("dave", 3)
    )
    assert state(conversations) == (3, {"ana", "eve", "ben", "dave"})
    # Several changes in one fetch are followed, step by step.
    conversations = learn(conversations, key("dave", 4), key("ana", 5), key("ana", 4))
    assert state(conversations) == (5, {"ana"})
    # A newcomer's late key counts; a key of one who was in the epoch before, late, does
    # not (the cost of the rule: he counts again from the next change).
    conversations = learn(conversations, key("fay", 5), key("dave", 5))
    assert state(conversations) == (5, {"ana", "fay"})


def test_a_device_the_relay_adds_to_a_member_later_cannot_move_the_group() -> None:
    conversations = family()
    conversations = learn(conversations, key("ana", 2, device="7"))
    conversations = learn(conversations, key("ana", 50, device="7"))
    assert state(conversations) == (2, {"ana", "eve"})


def test_the_epoch_is_stored_and_a_store_from_before_derives_it() -> None:
    conversations = learn(family(), key("ben", 99))
    stored = conversations.to_json()
    assert Conversations.from_json(stored).group_epochs == conversations.group_epochs
    assert stored["group_epochs"][GROUP]["removed"] == ["ben"]
    # Written before the epoch was kept: derived from the keys, the lowest epoch first.
    before = {name: value for name, value in stored.items() if name != "group_epochs"}
    loaded = Conversations.from_json(before)
    assert loaded.group_epochs == {}
    assert state(loaded) == (2, {"ana", "eve"})
    assert loaded.sealing_group_key(GROUP) is not None
    assert loaded.sealing_group_key(GROUP).epoch == 2  # type: ignore[union-attr]
    # The next fetch that brings a key stores it.
    assert learn(loaded, key("ana", 1, device="2")).group_epochs[GROUP] == GroupEpoch(
        2, frozenset({("ana", "1"), ("eve", "1")}), frozenset({"ben"})
    )
