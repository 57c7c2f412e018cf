"""Curve25519 keys as Signal uses them: X25519 agreement and XEdDSA signatures.

Signal signs with the X25519 identity key itself (XEdDSA): the Montgomery private scalar is
used as an Ed25519 scalar. libsignal departs from the XEdDSA paper in one way that matters
for interoperability: instead of negating the scalar to force the Edwards sign bit to 0, it
keeps the scalar and stores the sign bit of the Edwards public key in the otherwise unused
top bit of the signature's last byte; the verifier takes it from there.

Agreement and verification use `cryptography` (native). Signing needs the raw scalar, which
no native API accepts, so the Edwards arithmetic for it lives here, in pure Python. Python
integers are not constant-time; signing happens a few times a week (prekey rotation), on the
agent's own machine, which bounds what a timing observer could gather.
"""

import hashlib
import os
from dataclasses import dataclass, field
from functools import cache

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from .errors import SignalError, SignalErrorKind

PUBLIC_KEY_TYPE = 0x05
KEY_LENGTH = 32
SERIALIZED_PUBLIC_KEY_LENGTH = 1 + KEY_LENGTH
SIGNATURE_LENGTH = 64
SIGNATURE_RANDOM_LENGTH = 64

_P = 2**255 - 19  # the field prime
_L = 2**252 + 27742317777372353535851937790883648493  # order of the base point
_D2 = 2 * (-121665 * pow(121666, -1, _P)) % _P  # twice the Edwards curve constant d
_BASE_X = 15112221349535400772501151409588531511454012693041857206046113283949847762202
_BASE_Y = 46316835694926478169428394003475163141307993866256225615783033603165251855960
_SIGN_BIT = 0x80
# Bits of the scalar s above 2**253: libsignal rejects a signature that sets any of them.
_S_HIGH_BITS = 0b1110_0000
# XEdDSA's hash1 domain separator: 0xFE followed by 31 0xFF (2**256 - 2, little-endian).
_NONCE_PREFIX = b"\xfe" + b"\xff" * 31
_WINDOW_BITS = 4
_WINDOWS = 64  # 4-bit windows covering a 256-bit scalar

# A point in extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z, x*y = T/Z.
type _Point = tuple[int, int, int, int]
# A table entry ready to be added: (Y - X, Y + X, 2*d*T, 2*Z).
type _Cached = tuple[int, int, int, int]

_IDENTITY: _Point = (0, 1, 1, 0)


@dataclass(frozen=True, slots=True)
class KeyPair:
    """An X25519 key pair: raw 32-byte private scalar (clamped as libsignal keeps it), public u."""

    private: bytes = field(repr=False)
    public: bytes

    @classmethod
    def generate(cls) -> KeyPair:
        """A fresh random key pair."""
        return cls.from_private(os.urandom(KEY_LENGTH))

    @classmethod
    def from_private(cls, private: bytes) -> KeyPair:
        """The pair of a stored private key (clamped first, as libsignal does on load)."""
        if len(private) != KEY_LENGTH:
            raise SignalError(SignalErrorKind.INVALID_KEY, f"private key of {len(private)} bytes")
        clamped = _clamp(private)
        public = X25519PrivateKey.from_private_bytes(clamped).public_key().public_bytes_raw()
        return cls(private=clamped, public=public)


def serialize_public(raw: bytes) -> bytes:
    """The 33-byte wire form of a public key: type byte 0x05, then the raw u coordinate."""
    if len(raw) != KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"public key of {len(raw)} bytes")
    return bytes((PUBLIC_KEY_TYPE,)) + raw


def deserialize_public(data: bytes) -> bytes:
    """The raw public key of its 33-byte wire form (stricter than libsignal: no trailing bytes)."""
    if len(data) != SERIALIZED_PUBLIC_KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"serialized key of {len(data)} bytes")
    if data[0] != PUBLIC_KEY_TYPE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"key type {data[0]:#04x}")
    return data[1:]


def agree(private: bytes, public_raw: bytes) -> bytes:
    """X25519 shared secret; a low-order public key (all-zero secret) is refused like libsignal."""
    if len(private) != KEY_LENGTH or len(public_raw) != KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, "X25519 keys are 32 bytes")
    try:
        shared = X25519PrivateKey.from_private_bytes(private).exchange(
            X25519PublicKey.from_public_bytes(public_raw)
        )
    except ValueError as err:  # the native library refuses the all-zero result itself
        raise SignalError(SignalErrorKind.INVALID_KEY, "invalid key agreement") from err
    if shared == bytes(KEY_LENGTH):
        raise SignalError(SignalErrorKind.INVALID_KEY, "all-zero key agreement")
    return shared


def xeddsa_sign(private: bytes, message: bytes, random64: bytes | None = None) -> bytes:
    """A 64-byte XEdDSA signature of `message`, byte-compatible with libsignal's.

    `random64` is the nonce randomness (fresh when omitted); tests pass it to be deterministic.
    """
    if len(private) != KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"private key of {len(private)} bytes")
    if random64 is None:
        random64 = os.urandom(SIGNATURE_RANDOM_LENGTH)
    elif len(random64) != SIGNATURE_RANDOM_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, "XEdDSA randomness is 64 bytes")
    key = _clamp(private)
    scalar = int.from_bytes(key, "little") % _L
    edwards_public = _edwards_public(key)
    nonce = _hash_scalar(_NONCE_PREFIX, key, message, random64)
    commitment = _compress(_base_multiply(nonce))
    challenge = _hash_scalar(commitment, edwards_public, message)
    response = bytearray(((challenge * scalar + nonce) % _L).to_bytes(KEY_LENGTH, "little"))
    response[-1] |= edwards_public[-1] & _SIGN_BIT
    return commitment + bytes(response)


def xeddsa_verify(public_raw: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is libsignal-valid for `message` under the X25519 key `public_raw`.

    The Montgomery key becomes an Ed25519 key (sign bit from the signature) and a standard
    cofactorless Ed25519 check runs natively. Like libsignal, a scalar s up to 2**253 is
    taken modulo the group order, so it is reduced before the stricter native check.
    """
    if len(public_raw) != KEY_LENGTH or len(signature) != SIGNATURE_LENGTH:
        return False
    sign = signature[-1] & _SIGN_BIT
    s_bytes = bytearray(signature[KEY_LENGTH:])
    s_bytes[-1] &= ~_SIGN_BIT & 0xFF
    if s_bytes[-1] & _S_HIGH_BITS:
        return False
    # The top bit of u is ignored and u may be unreduced, as in curve25519-dalek.
    u = (int.from_bytes(public_raw, "little") & ((1 << 255) - 1)) % _P
    if u == _P - 1:  # no Edwards point: y = (u - 1) / (u + 1) has no denominator
        return False
    y = (u - 1) * pow(u + 1, -1, _P) % _P
    if u == 0:  # y = -1 and x = 0: the point's canonical encoding has sign 0
        sign = 0
    edwards_public = (y | sign << 248).to_bytes(KEY_LENGTH, "little")
    reduced_s = (int.from_bytes(s_bytes, "little") % _L).to_bytes(KEY_LENGTH, "little")
    try:
        Ed25519PublicKey.from_public_bytes(edwards_public).verify(
            signature[:KEY_LENGTH] + reduced_s, message
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def _clamp(private: bytes) -> bytes:
    clamped = bytearray(private)
    clamped[0] &= 0b1111_1000
    clamped[-1] &= 0b0111_1111
    clamped[-1] |= 0b0100_0000
    return bytes(clamped)


def _hash_scalar(*parts: bytes) -> int:
    digest = hashlib.sha512()
    for part in parts:
        digest.update(part)
    return int.from_bytes(digest.digest(), "little") % _L


def _edwards_public(clamped_private: bytes) -> bytes:
    """The compressed Ed25519 point of the private scalar."""
    return _compress(_base_multiply(int.from_bytes(clamped_private, "little") % _L))


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


def _base_multiply(scalar: int) -> _Point:
    """scalar * B for 0 <= scalar < 2**256, by fixed 4-bit windows over the base table."""
    result = _IDENTITY
    mask = (1 << _WINDOW_BITS) - 1
    for row in _base_table():
        digit = scalar & mask
        if digit:
            result = _add(result, row[digit])
        scalar >>= _WINDOW_BITS
    return result


def _compress(point: _Point) -> bytes:
    """The 32-byte Ed25519 encoding: y, with the parity of x in the top bit."""
    x, y, z, _ = point
    z_inverse = pow(z, -1, _P)
    x = x * z_inverse % _P
    y = y * z_inverse % _P
    return (y | (x & 1) << 255).to_bytes(KEY_LENGTH, "little")
