"""The bounds a host shows are the client's own constants, and eviction restores a bound
passed to its low-water mark: below the bound, never to nothing."""

from dataclasses import fields

from custom_components.pacerelle.client import limits
from custom_components.pacerelle.client.limits import BOUNDS, LOW_WATER_PERCENT, low_water


def test_the_bounds_are_the_constants_they_name() -> None:
    constants = {name: value for name, value in vars(limits).items() if name.startswith("MAX_")}
    for item in fields(BOUNDS):
        value = getattr(BOUNDS, item.name)
        assert value > 0, item.name
        assert value in {*constants.values(), limits.DEFAULT_EXPIRE_AFTER}, item.name
    assert BOUNDS.default_expire_after <= BOUNDS.expire_after
    assert BOUNDS.send_text_chars == limits.MAX_SEND_TEXT_CHARS


def test_low_water_is_below_the_bound_and_not_far() -> None:
    for bound in (10, 500, 2000):
        restored = low_water(bound)
        assert restored < bound
        assert restored == bound * LOW_WATER_PERCENT // 100
    assert low_water(limits.MAX_HANDED_OVER) > 0
