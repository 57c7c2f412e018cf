"""Arithmetic in Z_q[X]/(X^256 + 1) for Kyber and ML-KEM: the NTT, its inverse, products.

Polynomials are plain lists of 256 ints. The transforms are the "constant geometry"
rearrangement of FIPS 203 Algorithms 9 and 10: every layer pairs element i with
element i + 128 and writes the butterfly outputs to 2i and 2i + 1, so each layer is a
few whole-list operations (slices and `map`) instead of 128 indexed updates. The price
is the order of the transformed coefficients: this module keeps NTT-domain
polynomials in a *split* layout, the 128 even-indexed values of the standard order
followed by the 128 odd-indexed ones (`to_standard` and `from_standard` convert). The
split layout is also what the pairwise products want: each degree-1 residue is
(f[i], f[i + 128]).

Reductions are lazy: sums are left to grow, and only products are reduced, which keeps
every int far below 2^62 while halving the number of `%` operations.
"""

from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import add, mod, mul, sub

Q = 3329
N = 256
HALF = N // 2
LAYERS = 7
ROOT_OF_UNITY = 17  # a primitive 256th root of unity modulo Q


def _bit_reverse_7(value: int) -> int:
    return int(f"{value:07b}"[::-1], 2)


# ZETAS[k] = 17^BitRev7(k) mod q, the twiddle factors of FIPS 203 in their order of use.
ZETAS = tuple(pow(ROOT_OF_UNITY, _bit_reverse_7(k), Q) for k in range(HALF))
# GAMMAS[i] = 17^(2 BitRev7(i) + 1): residue i is taken modulo X^2 - GAMMAS[i].
GAMMAS = tuple(pow(ROOT_OF_UNITY, 2 * _bit_reverse_7(i) + 1, Q) for i in range(HALF))
_INVERSE_SCALE = pow(HALF, -1, Q)  # 128^-1 mod q undoes the seven halvings


def _forward_twiddles(layer: int) -> tuple[int, ...]:
    # After `layer` layers, the low `layer` bits of a position hold the block number.
    block_mask = (1 << layer) - 1
    return tuple(ZETAS[(1 << layer) + (i & block_mask)] for i in range(HALF))


def _inverse_twiddles(layer: int) -> tuple[int, ...]:
    # Algorithm 10 walks the same blocks with k counting down from 2^(layer+1) - 1.
    block_mask = (1 << layer) - 1
    return tuple(ZETAS[(2 << layer) - 1 - (i & block_mask)] for i in range(HALF))


_FORWARD = tuple(_forward_twiddles(layer) for layer in range(LAYERS))
_INVERSE = tuple(_inverse_twiddles(layer) for layer in reversed(range(LAYERS)))
# The last inverse layer also applies the 128^-1 scaling to its products.
_INVERSE_LAST = tuple(z * _INVERSE_SCALE % Q for z in _INVERSE[-1])
_Q_REPEATED = (Q,) * HALF


def ntt(poly: Sequence[int]) -> list[int]:
    """The NTT of a polynomial in standard order (any ints), split layout, reduced."""
    values = list(poly)
    for twiddles in _FORWARD:
        low = values[:HALF]
        twisted = list(map(mod, map(mul, twiddles, values[HALF:]), _Q_REPEATED))
        values[0::2] = map(add, low, twisted)
        values[1::2] = map(sub, low, twisted)
    return [value % Q for value in values]


def inverse_ntt(values: Sequence[int]) -> list[int]:
    """The polynomial (standard order, reduced) whose NTT is `values` (split layout)."""
    poly = list(values)
    for twiddles in _INVERSE[:-1]:
        even = poly[0::2]
        odd = poly[1::2]
        poly[HALF:] = map(mod, map(mul, twiddles, map(sub, odd, even)), _Q_REPEATED)
        poly[:HALF] = map(add, even, odd)
    even = poly[0::2]
    odd = poly[1::2]
    poly[HALF:] = [z * (b - a) % Q for z, a, b in zip(_INVERSE_LAST, even, odd, strict=True)]
    poly[:HALF] = [(a + b) * _INVERSE_SCALE % Q for a, b in zip(even, odd, strict=True)]
    return poly


def to_standard(values: Sequence[int]) -> list[int]:
    """Split layout to the standard coefficient order (what the byte encodings use)."""
    ordered = [0] * N
    ordered[0::2] = values[:HALF]
    ordered[1::2] = values[HALF:]
    return ordered


def from_standard(values: Sequence[int]) -> list[int]:
    """Standard coefficient order to the split layout."""
    return [*values[0::2], *values[1::2]]


type PreparedNtt = tuple[list[int], list[int], list[int]]


def prepare(values: Sequence[int]) -> PreparedNtt:
    """Split an NTT-domain operand used several times, with its odd half times gamma."""
    even = list(values[:HALF])
    odd = list(values[HALF:])
    odd_gamma = [a * g % Q for a, g in zip(odd, GAMMAS, strict=True)]
    return even, odd, odd_gamma


def dot(row: Sequence[Sequence[int]], column: Sequence[PreparedNtt]) -> list[int]:
    """Sum of pairwise NTT-domain products row[j] * column[j] (split layout, reduced).

    In residue i: (a0 + a1 X)(b0 + b1 X) = a0 b0 + a1 b1 gamma_i + (a0 b1 + a1 b0) X.
    """
    acc_even = [0] * HALF
    acc_odd = [0] * HALF
    for values, (b_even, b_odd, b_odd_gamma) in zip(row, column, strict=True):
        a_even = values[:HALF]
        a_odd = values[HALF:]
        acc_even = [
            s + a0 * b0 + a1 * b1g
            for s, a0, a1, b0, b1g in zip(acc_even, a_even, a_odd, b_even, b_odd_gamma, strict=True)
        ]
        acc_odd = [
            s + a0 * b1 + a1 * b0
            for s, a0, a1, b0, b1 in zip(acc_odd, a_even, a_odd, b_even, b_odd, strict=True)
        ]
    return [*map(mod, acc_even, _Q_REPEATED), *map(mod, acc_odd, _Q_REPEATED)]


def add_reduce(first: Sequence[int], *others: Sequence[int]) -> list[int]:
    """Coefficient-wise sum of polynomials, reduced modulo q."""
    total: Iterable[int] = first
    for poly in others:
        total = map(add, total, poly)
    return list(map(mod, total, repeat(Q, N)))


def sub_reduce(left: Sequence[int], right: Sequence[int]) -> list[int]:
    """Coefficient-wise difference, reduced modulo q."""
    return [(a - b) % Q for a, b in zip(left, right, strict=True)]
