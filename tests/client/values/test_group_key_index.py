"""The group keys by group (values/group_key_index.py): the same answer as a scan of all
keys, kept per mapping, a new mapping answered anew."""

from custom_components.pacerelle.client.values.agent_data import Conversations
from custom_components.pacerelle.client.values.group_key_index import KEPT, keys_by_group
from custom_components.pacerelle.client.values.groups import GroupKey


def _keys(groups: int, per_group: int) -> dict[str, GroupKey]:
    keys = [
        GroupKey(f"grp_{n % groups}", f"k{n}", 1, bytes(32), f"usr_{n}", "1")
        for n in range(groups * per_group)
    ]
    return {key.name: key for key in keys}


def test_each_group_gets_its_keys_in_the_mappings_order() -> None:
    keys = _keys(groups=4, per_group=5)
    index = keys_by_group(keys)
    for group in ("grp_0", "grp_3"):
        assert index[group] == tuple(k for k in keys.values() if k.conversation_id == group)
    assert "grp_9" not in index
    assert keys_by_group(keys) is index  # kept for the same mapping


def test_a_new_mapping_with_a_key_more_is_indexed_again() -> None:
    conversations = Conversations(group_keys=_keys(groups=2, per_group=2))
    assert len(conversations.keys_of("grp_0")) == 2
    learned = GroupKey("grp_0", "new", 2, bytes(32), "usr_new", "1")
    grown = conversations.with_group_key(learned)
    assert grown.keys_of("grp_0")[-1] == learned
    assert len(conversations.keys_of("grp_0")) == 2  # the older value is unchanged
    assert grown.holds_group_key("grp_1")
    assert not grown.holds_group_key("grp_2")


def test_only_the_latest_mappings_are_held() -> None:
    mappings = [_keys(groups=1, per_group=1) for _ in range(KEPT + 3)]
    first = keys_by_group(mappings[0])
    for keys in mappings[1:]:
        keys_by_group(keys)
    again = keys_by_group(mappings[0])
    assert again is not first  # worked out again
    assert again == first
