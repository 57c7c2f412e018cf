"""SPQR's parameters: zero means libsignal's default, values beyond u32 are refused, and a
direction switches to the other party's."""

import pytest

from custom_components.pacerelle.client.signal import consts
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.params import (
    UINT32_MAX,
    ChainParams,
    Direction,
)


def test_zero_means_the_default() -> None:
    params = ChainParams(0, 0)
    assert params.max_jump == consts.MAX_FORWARD_JUMPS
    assert params.max_ooo_keys == consts.MAX_MESSAGE_KEYS
    assert ChainParams(max_jump=UINT32_MAX).max_jump == UINT32_MAX
    assert ChainParams(max_ooo_keys=100).trim_size == 111


@pytest.mark.parametrize("values", [(-1, 1), (1, UINT32_MAX + 1)])
def test_out_of_range_values_are_refused(values: tuple[int, int]) -> None:
    with pytest.raises(SignalError) as refused:
        ChainParams(*values)
    assert refused.value.kind is SignalErrorKind.PQ_RATCHET


def test_a_direction_switches() -> None:
    assert Direction.A2B.switch() is Direction.B2A
    assert Direction.B2A.switch() is Direction.A2B
