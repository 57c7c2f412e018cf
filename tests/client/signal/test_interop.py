"""Our engine against the native libsignal peer over random conversations (fixed seeds)."""

from collections import Counter

import pytest

from tests.client.signal.interop import run
from tests.helpers.reference_peer import reference_peer_available

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not reference_peer_available(), reason="no reference peer"),
]

SEEDS = (11, 12, 13, 14)
CONVERSATIONS, MESSAGES = 4, 150


def test_random_conversations_all_decrypt() -> None:
    events: Counter[str] = Counter()
    total = 0
    for seed in SEEDS:
        tally = run(seed, conversations=CONVERSATIONS, messages=MESSAGES)
        assert tally.failures == [], f"seed {seed}"
        total += tally.total
        events += tally.events
    assert total == len(SEEDS) * CONVERSATIONS * MESSAGES >= 1000
    # The schedule really exercised every situation it is meant to.
    for event in (
        "PreKey messages",
        "human messages",
        "agent messages",
        "late messages",
        "new sessions",
        "state reloads",
        "native reloads",
        "prekey rotations",
    ):
        assert events[event] > 0, event


LEGACY_SEEDS = (21, 23, 26)


def test_an_old_store_interoperates_across_its_rotation_to_native_prekeys() -> None:
    """Sessions start on the old store's round 3 prekeys, then on natively made ones."""
    events: Counter[str] = Counter()
    for seed in LEGACY_SEEDS:
        tally = run(seed, conversations=3, messages=120, legacy_prekeys=True)
        assert tally.failures == [], f"seed {seed}"
        assert tally.total == 3 * 120
        events += tally.events
    assert events["bundles with legacy Kyber prekeys"] > 0
    assert events["prekey rotations"] > 0
    assert events["bundles with native Kyber prekeys"] > 0
