"""The pure-Python XEdDSA signer the engine used before libsodium: a test oracle only.

Variable-time Python integers, so never for real keys: tests compare the native signer
with it byte for byte (same nonce randomness), and build stores "made by the old code".
"""

import hashlib
from functools import cache

_P = 2**255 - 19  # the field prime
_L = 2**252 + 27742317777372353535851937790883648493  # order of the base point
_D2 = 2 * (-121665 * pow(121666, -1, _P)) % _P  # twice the Edwards curve constant d
_BASE_X = 15112221349535400772501151409588531511454012693041857206046113283949847762202
_BASE_Y = 46316835694926478169428394003475163141307993866256225615783033603165251855960
_SIGN_BIT = 0x80
_NONCE_PREFIX = b"\xfe" + b"\xff" * 31
_KEY_LENGTH = 32
_WINDOW_BITS = 4
_WINDOWS = 64  # 4-bit windows covering a 256-bit scalar

# A point in extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z, x*y = T/Z.
type _Point = tuple[int, int, int, int]
# A table entry ready to be added: (Y - X, Y + X, 2*d*T, 2*Z).
type _Cached = tuple[int, int, int, int]

_IDENTITY: _Point = (0, 1, 1, 0)


def xeddsa_sign_pure(private: bytes, message: bytes, random64: bytes) -> bytes:
    """libsignal's XEdDSA signature, computed with Python integers."""
    key = clamp(private)
    scalar = int.from_bytes(key, "little") % _L
    edwards_public = edwards_public_key(key)
    nonce = _hash_scalar(_NONCE_PREFIX, key, message, random64)
    commitment = compress(base_multiply(nonce))
    challenge = _hash_scalar(commitment, edwards_public, message)
    response = bytearray(((challenge * scalar + nonce) % _L).to_bytes(_KEY_LENGTH, "little"))
    response[-1] |= edwards_public[-1] & _SIGN_BIT
    return commitment + bytes(response)


def clamp(private: bytes) -> bytes:
    """The X25519 clamping libsignal applies to stored private keys."""
    clamped = bytearray(private)
    clamped[0] &= 0b1111_1000
    clamped[-1] &= 0b0111_1111
    clamped[-1] |= 0b0100_0000
    return bytes(clamped)


def edwards_public_key(clamped_private: bytes) -> bytes:
    """The compressed Ed25519 point of the private scalar."""
    return compress(base_multiply(int.from_bytes(clamped_private, "little") % _L))


def _hash_scalar(*parts: bytes) -> int:
    digest = hashlib.sha512()
    for part in parts:
        digest.update(part)
    return int.from_bytes(digest.digest(), "little") % _L


def _add(point: _Point, cached: _Cached) -> _Point:
    """Unified addition on the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 (HWCD 2008)."""
    x1, y1, z1, t1 = point
    y_minus_x, y_plus_x, t2d, z2 = cached
    a = (y1 - x1) * y_minus_x % _P
    b = (y1 + x1) * y_plus_x % _P
    c = t1 * t2d % _P
    d = z1 * z2 % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _cache_point(point: _Point) -> _Cached:
    x, y, z, t = point
    return ((y - x) % _P, (y + x) % _P, t * _D2 % _P, 2 * z % _P)


@cache
def _base_table() -> tuple[tuple[_Cached, ...], ...]:
    """Row i holds j * 16**i * B for j in 0..15: a scalar multiple is then 64 additions.

    Built once on first use (about a thousand additions, a few milliseconds).
    """
    rows = []
    step: _Point = (_BASE_X, _BASE_Y, 1, _BASE_X * _BASE_Y % _P)
    for _ in range(_WINDOWS):
        step_cached = _cache_point(step)
        row = [_IDENTITY]
        for _ in range((1 << _WINDOW_BITS) - 1):
            row.append(_add(row[-1], step_cached))
        rows.append(tuple(_cache_point(point) for point in row))
        step = _add(row[-1], step_cached)
    return tuple(rows)


def base_multiply(scalar: int) -> _Point:
    """scalar * B for 0 <= scalar < 2**256, by fixed 4-bit windows over the base table."""
    result = _IDENTITY
    mask = (1 << _WINDOW_BITS) - 1
    for row in _base_table():
        digit = scalar & mask
        if digit:
            result = _add(result, row[digit])
        scalar >>= _WINDOW_BITS
    return result


def compress(point: _Point) -> bytes:
    """The 32-byte Ed25519 encoding: y, with the parity of x in the top bit."""
    x, y, z, _ = point
    z_inverse = pow(z, -1, _P)
    x = x * z_inverse % _P
    y = y * z_inverse % _P
    return (y | (x & 1) << 255).to_bytes(_KEY_LENGTH, "little")


_A = 486662
_A24 = 121665


def is_canonical_montgomery_pure(u_bytes: bytes) -> bool:
    """The pure-Python PublicKey::is_canonical the engine used before libsodium (an oracle).

    A reduced u, on the curve rather than its twist, not -1, and of order dividing L
    (checked with a Montgomery ladder by L).
    """
    u = int.from_bytes(u_bytes, "little")
    if u >= _P or u in (0, _P - 1):
        return False
    rhs = (u * u % _P * u + _A * u * u + u) % _P
    if pow(rhs, (_P - 1) // 2, _P) != 1:
        return False
    x2, z2, x3, z3 = 1, 0, u, 1
    swap = 0
    for bit_index in reversed(range(_L.bit_length())):
        bit = (_L >> bit_index) & 1
        if swap ^ bit:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % _P, (x2 - z2) % _P
        aa, bb = a * a % _P, b * b % _P
        e = (aa - bb) % _P
        c, d = (x3 + z3) % _P, (x3 - z3) % _P
        da, cb = d * a % _P, c * b % _P
        x3 = (da + cb) ** 2 % _P
        z3 = u * ((da - cb) ** 2) % _P
        x2 = aa * bb % _P
        z2 = e * (aa + _A24 * e) % _P
    if swap:
        z2 = z3
    return z2 == 0
