"""Lagrange interpolation in GF(2^16): the polynomial through some points gives back each
of them, and its value elsewhere is the one any other choice of its points gives."""

import random

from custom_components.pacerelle.client.signal.spqr.encoding import gf
from custom_components.pacerelle.client.signal.spqr.encoding.lagrange import evaluate


def _poly(coefficients: list[int], x: int) -> int:
    value = 0
    for coefficient in reversed(coefficients):
        value = gf.add(gf.mul(value, x), coefficient)
    return value


def test_the_interpolated_polynomial_is_the_one_through_the_points() -> None:
    rng = random.Random(5)
    coefficients = [rng.randrange(gf.FIELD_SIZE) for _ in range(6)]
    xs = rng.sample(range(1, 1000), 12)
    points = [(x, _poly(coefficients, x)) for x in xs]
    for x, y in points[:6]:
        assert evaluate(points[:6], x) == y
    for t in (0, 2000, 65535):
        assert evaluate(points[:6], t) == _poly(coefficients, t)
        assert evaluate(points[6:], t) == _poly(coefficients, t)


def test_a_zero_value_point_interpolates_too() -> None:
    points = [(1, 0), (2, 0), (3, 0)]
    assert evaluate(points, 77) == 0
