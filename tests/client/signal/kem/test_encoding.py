"""ByteEncode/ByteDecode of FIPS 203: every width round trips, compression loses at most
half a step of q / 2^d, and the modulus check finds a coefficient at or above q."""

import random

import pytest

from custom_components.pacerelle.client.signal.kem.encoding import (
    compress_encode,
    decode,
    decode_decompress,
    decode_vector,
    encode,
    encode_vector,
    encoded_size,
    has_only_reduced,
)
from custom_components.pacerelle.client.signal.kem.ntt import N, Q


@pytest.mark.parametrize("bits", [1, 4, 5, 10, 11, 12])
def test_every_width_round_trips(bits: int) -> None:
    rng = random.Random(bits)
    values = [rng.randrange(1 << bits) for _ in range(N)]
    encoded = encode(values, bits)
    assert len(encoded) == encoded_size(bits) == 32 * bits
    assert decode(encoded, bits) == values


@pytest.mark.parametrize("bits", [1, 4, 5, 10, 11])
def test_compression_stays_within_half_a_step(bits: int) -> None:
    rng = random.Random(100 + bits)
    poly = [rng.randrange(Q) for _ in range(N)]
    back = decode_decompress(compress_encode(poly, bits), bits)
    bound = Q / (1 << (bits + 1)) + 1
    for original, restored in zip(poly, back, strict=True):
        distance = abs(original - restored) % Q
        assert min(distance, Q - distance) <= bound


def test_vectors_split_back_and_the_modulus_check_finds_q() -> None:
    polys = [[i % Q for i in range(k, k + N)] for k in (0, 1000, 3000)]
    data = encode_vector(polys, 12)
    assert decode_vector(data, 3, 12) == polys
    assert has_only_reduced(data, 3)
    unreduced = [*polys[:2], [Q, *polys[2][1:]]]
    assert not has_only_reduced(encode_vector(unreduced, 12), 3)
