"""Evaluating the interpolating polynomial through given points, in the log domain.

spqr builds each polynomial's coefficients (Lagrange interpolation) and then
evaluates them. The polynomial of degree < n through n points with distinct x
is unique, so evaluating it straight from the points (barycentric Lagrange
form) gives the same field elements, hence the same bytes, with less work:

    P(t) = sum_j y_j * L_j(t),  L_j(t) = w_j * M(t) / (t - x_j),
    M(t) = prod_k (t - x_k),    w_j = 1 / prod_{k != j} (x_j - x_k)

Products become sums of logs (subtraction is XOR), reduced modulo the group order.
"""

from functools import lru_cache, reduce
from operator import add, xor

from . import gf

_EXP_AT = gf.EXP.__getitem__
_LOG = gf.LOG


def log_weights(xs: tuple[int, ...]) -> tuple[int, ...]:
    """log w_j for distinct xs."""
    order = gf.GROUP_ORDER
    # The sum over all k includes k == j, whose LOG[0] term is taken back out.
    return tuple((gf.ZERO_LOG - sum([_LOG[xj ^ xk] for xk in xs])) % order for xj in xs)


@lru_cache(maxsize=16)
def consecutive_log_weights(count: int) -> tuple[int, ...]:
    """log w_j for xs = 0, 1, ..., count - 1: the encoder's points (few sizes in use)."""
    return log_weights(tuple(range(count)))


def basis_logs(xs: tuple[int, ...], weights: tuple[int, ...], t: int) -> list[int]:
    """log L_j(t) for every j; t must differ from every x (then no L_j(t) is zero)."""
    order = gf.GROUP_ORDER
    diffs = [_LOG[t ^ x] for x in xs]
    log_m = sum(diffs)
    return [(w + log_m - d) % order for w, d in zip(weights, diffs, strict=True)]


def combine(basis: list[int], y_logs: list[int]) -> int:
    """sum_j y_j * L_j(t) from log L_j(t) and log y_j (zero ys map to gf.ZERO_LOG)."""
    return reduce(xor, map(_EXP_AT, map(add, basis, y_logs)), 0)


def evaluate(points: list[tuple[int, int]], t: int) -> int:
    """P(t) for the polynomial through `points` (distinct x); t may be one of the x."""
    for x, y in points:
        if x == t:
            return y
    xs = tuple(x for x, _ in points)
    basis = basis_logs(xs, log_weights(xs), t)
    return combine(basis, [_LOG[y] for _, y in points])
