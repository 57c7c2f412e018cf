"""The number-theoretic transform of ML-KEM: inverse after forward is the identity, and a
product in the NTT domain is the negacyclic product of the polynomials (x^256 = -1)."""

import random

from custom_components.pacerelle.client.signal.kem.ntt import (
    N,
    Q,
    add_reduce,
    dot,
    from_standard,
    inverse_ntt,
    ntt,
    prepare,
    sub_reduce,
    to_standard,
)


def _negacyclic(a: list[int], b: list[int]) -> list[int]:
    out = [0] * N
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            k = i + j
            if k < N:
                out[k] = (out[k] + x * y) % Q
            else:
                out[k - N] = (out[k - N] - x * y) % Q
    return out


def test_inverse_undoes_forward() -> None:
    rng = random.Random(1)
    poly = [rng.randrange(Q) for _ in range(N)]
    assert inverse_ntt(ntt(poly)) == poly
    assert inverse_ntt(ntt([x + 5 * Q for x in poly])) == poly  # any ints, reduced
    assert to_standard(from_standard(poly)) == poly


def test_the_ntt_domain_multiplies_negacyclically() -> None:
    rng = random.Random(2)
    a = [rng.randrange(Q) for _ in range(N)]
    b = [rng.randrange(Q) for _ in range(N)]
    product = dot([ntt(a)], [prepare(ntt(b))])
    assert inverse_ntt(product) == _negacyclic(a, b)


def test_sums_and_differences_are_reduced() -> None:
    a = [Q - 1] * N
    b = [2] * N
    assert add_reduce(a, b) == [1] * N
    assert sub_reduce(b, a) == [3] * N
