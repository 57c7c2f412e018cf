"""The eviction counters: added per name, saved and read back, and a stored value that is
not a count (negative, a float, a string, a bool) read as zero rather than trusted."""

from custom_components.pacerelle.client.values.evictions import Evictions


def test_counts_add_up_and_read_back() -> None:
    counted = Evictions().added(sessions=2).added(sessions=1, group_keys=4)
    assert (counted.sessions, counted.group_keys, counted.pending_requests) == (3, 4, 0)
    assert Evictions.from_json(counted.to_json()) == counted


def test_bad_stored_counts_read_as_zero() -> None:
    stored = {"sessions": -1, "group_keys": 2.5, "store_shrinks": "9", "history_entries": True}
    assert Evictions.from_json({**stored, "last_devices": 7}) == Evictions(last_devices=7)
    assert Evictions.from_json({}) == Evictions()  # a store from before the counters
