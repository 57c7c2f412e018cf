"""Byte encodings and lossy compression of polynomials (FIPS 203 section 4.2.1).

ByteEncode_d packs 256 d-bit values little-endian, which is exactly the little-endian
byte string of one big integer with d-bit lanes. Encoding merges neighbouring lanes
pairwise (eight whole-list steps) and converts once; decoding cuts the bytes into 32
chunks of eight lanes each and shifts the lanes out.
"""

from collections.abc import Sequence

from .ntt import N, Q

_LANES_PER_CHUNK = 8  # eight d-bit lanes always fill exactly d bytes
_CHUNKS = N // _LANES_PER_CHUNK
_MERGE_STEPS = 8  # 2^8 = 256 lanes merged into one integer


def encoded_size(bits: int) -> int:
    """Bytes taken by one polynomial at `bits` bits per coefficient."""
    return N * bits // 8


def encode(values: Sequence[int], bits: int) -> bytes:
    """ByteEncode_d of 256 values, each already in [0, 2^bits)."""
    lanes = list(values)
    width = bits
    for _ in range(_MERGE_STEPS):
        lanes = [low | (high << width) for low, high in zip(lanes[0::2], lanes[1::2], strict=True)]
        width *= 2
    return lanes[0].to_bytes(encoded_size(bits), "little")


def decode(data: bytes, bits: int) -> list[int]:
    """ByteDecode_d of exactly `encoded_size(bits)` bytes (for d = 12 values may reach 4095)."""
    mask = (1 << bits) - 1
    chunks = [
        int.from_bytes(data[start : start + bits], "little")
        for start in range(0, _CHUNKS * bits, bits)
    ]
    shifts = range(0, _LANES_PER_CHUNK * bits, bits)
    return [(chunk >> shift) & mask for chunk in chunks for shift in shifts]


def compress_encode(poly: Sequence[int], bits: int) -> bytes:
    """ByteEncode_d(Compress_d(poly)) for a reduced polynomial.

    Compress_d(x) = round(2^d x / q) mod 2^d; q is odd, so no value sits on a tie and
    floor((2^d x + (q - 1) / 2) / q) rounds the same way.
    """
    mask = (1 << bits) - 1
    half = Q // 2
    return encode([(((x << bits) + half) // Q) & mask for x in poly], bits)


def decode_decompress(data: bytes, bits: int) -> list[int]:
    """Decompress_d(ByteDecode_d(data)): round(q y / 2^d), ties upwards."""
    rounding = 1 << (bits - 1)
    return [(Q * y + rounding) >> bits for y in decode(data, bits)]


def encode_vector(polys: Sequence[Sequence[int]], bits: int) -> bytes:
    """The concatenated encodings of several polynomials."""
    return b"".join(encode(poly, bits) for poly in polys)


def decode_vector(data: bytes, count: int, bits: int) -> list[list[int]]:
    """Split `count` concatenated polynomial encodings and decode each."""
    size = encoded_size(bits)
    return [decode(data[i * size : (i + 1) * size], bits) for i in range(count)]


def has_only_reduced(data: bytes, count: int) -> bool:
    """Whether 12-bit encoded coefficients are all below q (the FIPS 203 modulus check)."""
    return all(value < Q for poly in decode_vector(data, count, 12) for value in poly)
