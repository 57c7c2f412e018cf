"""Pseudorandom polynomials: the public matrix and the small noise terms (FIPS 203 4.2.2).

Both Kyber round 3 and ML-KEM use these unchanged: A[i][j] = SampleNTT(XOF(rho, j, i))
with XOF = SHAKE-128, and noise = CBD_eta(PRF(sigma, nonce)) with PRF = SHAKE-256.
Every parameter set used here (Kyber1024, ML-KEM-768) has eta1 = eta2 = 2.
"""

from hashlib import shake_128, shake_256

from .ntt import N, Q

ETA = 2
_CBD_BYTES = 64 * ETA
_XOF_BLOCK = 168  # SHAKE-128 rate in bytes
_XOF_FIRST_BLOCKS = 3  # 336 candidates: enough for 256 accepted values about 99% of the time


def _cbd2_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    # Each byte yields two coefficients, one per nibble: (b0 + b1) - (b2 + b3).
    def nibble(bits: int) -> int:
        return (bits & 1) + ((bits >> 1) & 1) - ((bits >> 2) & 1) - ((bits >> 3) & 1)

    return tuple(nibble(b & 15) for b in range(256)), tuple(nibble(b >> 4) for b in range(256))


_CBD2_LOW, _CBD2_HIGH = _cbd2_tables()


def sample_ntt(rho: bytes, i: int, j: int) -> list[int]:
    """SampleNTT(rho || i || j) in the split layout (see ntt.py); values in [0, q)."""
    seed = rho + bytes((i, j))
    blocks = _XOF_FIRST_BLOCKS
    while True:
        stream = shake_128(seed).digest(blocks * _XOF_BLOCK)
        first, second, third = stream[0::3], stream[1::3], stream[2::3]
        candidates = [0] * (2 * len(first))
        candidates[0::2] = [a | ((b & 15) << 8) for a, b in zip(first, second, strict=True)]
        candidates[1::2] = [(b >> 4) | (c << 4) for b, c in zip(second, third, strict=True)]
        accepted = [d for d in candidates if d < Q]
        if len(accepted) >= N:
            return [*accepted[0:N:2], *accepted[1:N:2]]
        blocks += 1  # the longer digest extends the same stream


def sample_matrix(rho: bytes, rank: int, *, transposed: bool) -> list[list[list[int]]]:
    """The matrix A (or its transpose) as rows of NTT-domain polynomials."""
    if transposed:
        return [[sample_ntt(rho, i, j) for j in range(rank)] for i in range(rank)]
    return [[sample_ntt(rho, j, i) for j in range(rank)] for i in range(rank)]


def prf(seed: bytes, nonce: int, length: int = _CBD_BYTES) -> bytes:
    """PRF_eta(seed, nonce) = SHAKE-256(seed || nonce)."""
    return shake_256(seed + bytes((nonce,))).digest(length)


def sample_cbd2(seed: bytes, nonce: int) -> list[int]:
    """CBD_2(PRF(seed, nonce)) in standard order; values in [-2, 2], not reduced."""
    stream = prf(seed, nonce)
    poly = [0] * N
    poly[0::2] = [_CBD2_LOW[b] for b in stream]
    poly[1::2] = [_CBD2_HIGH[b] for b in stream]
    return poly
