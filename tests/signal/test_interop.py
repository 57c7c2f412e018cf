"""Our engine against the native libsignal peer over random conversations (fixed seeds)."""

import pytest

from tests.reference_peer import reference_peer_available
from tests.signal.interop import run

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not reference_peer_available(), reason="no reference peer"),
]


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_conversations_all_decrypt(seed: int) -> None:
    tally = run(seed, conversations=3, messages=100)
    assert tally.total == 300
    assert tally.failures == []
