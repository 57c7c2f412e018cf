"""The crypto benchmark runs and prints every figure (its numbers are read, not asserted)."""

import pytest

from tests.bench import crypto
from tests.helpers.reference_peer import reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")


def test_bench_prints_every_operation_beside_the_reference() -> None:
    lines = crypto.run(conversations=1, rounds=5)
    text = "\n".join(lines)
    for name in ("bundle", "set-up", "decrypt", "encrypt", "ping-pong", "slowest", "session JSON"):
        assert name in text
    assert "constant-time" in lines[1]
    rows = {line.split()[0]: line for line in lines[2:7]}
    assert set(rows) == set(crypto.OPERATIONS)
    assert all(" yes" in row for row in rows.values())
