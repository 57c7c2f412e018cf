"""GF(2^16) as spqr's erasure code computes in it: the table multiplication is the
polynomial one, every non-zero element has an inverse, and division by zero gives 0."""

import random

from custom_components.pacerelle.client.signal.spqr.encoding import gf


def test_table_multiplication_is_polynomial_multiplication() -> None:
    rng = random.Random(16)
    for _ in range(500):
        a, b = rng.randrange(gf.FIELD_SIZE), rng.randrange(gf.FIELD_SIZE)
        assert gf.mul(a, b) == gf.mul_slow(a, b)
    assert gf.mul(0, 12345) == gf.mul(12345, 0) == 0


def test_division_inverts_multiplication() -> None:
    rng = random.Random(17)
    for _ in range(500):
        a, b = rng.randrange(gf.FIELD_SIZE), rng.randrange(1, gf.FIELD_SIZE)
        assert gf.div(gf.mul(a, b), b) == a
    assert gf.div(7, 0) == 0
    assert gf.add(0x1234, 0x1234) == 0  # characteristic 2
