"""Curve25519 keys as Signal uses them: X25519 agreement and XEdDSA signatures.

Signal signs with the X25519 identity key itself (XEdDSA). Unlike the XEdDSA paper,
libsignal keeps the scalar un-negated and stores the Edwards public key's sign bit in the
top bit of the signature's last byte; the verifier takes it from there.
Everything touching a private key runs in constant-time libsodium code through PyNaCl
(X25519, and the Ed25519 scalar and group operations signing needs); Python only moves and
clamps the secret bytes. Verification, on public data, uses `cryptography`. Without PyNaCl,
key operations raise INVALID_STATE rather than fall back to variable-time arithmetic, and
setup refuses to start (`native_signing_unavailable`).
"""

import hashlib
import os
from dataclasses import dataclass, field
from types import ModuleType

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import SignalError, SignalErrorKind

PUBLIC_KEY_TYPE = 0x05
KEY_LENGTH = 32
SERIALIZED_PUBLIC_KEY_LENGTH = 1 + KEY_LENGTH
SIGNATURE_LENGTH = 64
SIGNATURE_RANDOM_LENGTH = 64

_P = 2**255 - 19  # the field prime
_L = 2**252 + 27742317777372353535851937790883648493  # order of the base point
_SIGN_BIT = 0x80
# Bits of the scalar s above 2**253: libsignal rejects a signature that sets any of them.
_S_HIGH_BITS = 0b1110_0000
# XEdDSA's hash1 domain separator: 0xFE followed by 31 0xFF (2**256 - 2, little-endian).
_NONCE_PREFIX = b"\xfe" + b"\xff" * 31
_WIDE_SCALAR_PADDING = bytes(32)  # libsodium reduces 64-byte scalars; ours are 32


def _load_sodium() -> ModuleType | None:
    """PyNaCl's libsodium bindings if importable and built with the Ed25519 core."""
    try:
        from nacl import bindings  # noqa: PLC0415 - a missing PyNaCl must not break import
    except ImportError:
        return None
    if not (bindings.has_crypto_core_ed25519 and bindings.has_crypto_scalarmult_ed25519):
        return None
    return bindings


_SODIUM = _load_sodium()


def _sodium() -> ModuleType:
    """The libsodium bindings; INVALID_STATE without them (setup checks this first)."""
    if _SODIUM is None:
        raise SignalError(SignalErrorKind.INVALID_STATE, native_signing_unavailable() or "")
    return _SODIUM


def native_signing_unavailable() -> str | None:
    """Why libsodium's X25519 and Ed25519 operations (every private-key operation here, and
    the prime-order check of incoming keys) cannot run, or None when they can."""
    if _SODIUM is None:
        return "PyNaCl (libsodium) with the Ed25519 operations is not installed"
    return None


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
        return cls(private=clamped, public=_sodium().crypto_scalarmult_base(clamped))


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
    sodium = _sodium()
    try:
        shared: bytes = sodium.crypto_scalarmult(private, public_raw)
    except RuntimeError as err:  # PyNaCl's error for libsodium refusing a small-order point
        raise SignalError(SignalErrorKind.INVALID_KEY, "invalid key agreement") from err
    if shared == bytes(KEY_LENGTH):
        raise SignalError(SignalErrorKind.INVALID_KEY, "all-zero key agreement")
    return shared


def xeddsa_sign(private: bytes, message: bytes, random64: bytes | None = None) -> bytes:
    """A 64-byte XEdDSA signature of `message`, byte-compatible with libsignal's.

    `random64` is the nonce randomness (fresh when omitted); tests pass it to be deterministic.
    Every operation on the private scalar or the nonce is libsodium's or OpenSSL's.
    """
    if len(private) != KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"private key of {len(private)} bytes")
    if random64 is None:
        random64 = os.urandom(SIGNATURE_RANDOM_LENGTH)
    elif len(random64) != SIGNATURE_RANDOM_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_KEY, "XEdDSA randomness is 64 bytes")
    sodium = _sodium()
    key = _clamp(private)
    scalar: bytes = sodium.crypto_core_ed25519_scalar_reduce(key + _WIDE_SCALAR_PADDING)
    edwards_public: bytes = sodium.crypto_scalarmult_ed25519_base_noclamp(scalar)
    nonce: bytes = sodium.crypto_core_ed25519_scalar_reduce(
        _sha512(_NONCE_PREFIX, key, message, random64)
    )
    commitment: bytes = sodium.crypto_scalarmult_ed25519_base_noclamp(nonce)
    challenge = sodium.crypto_core_ed25519_scalar_reduce(
        _sha512(commitment, edwards_public, message)
    )
    response = bytearray(
        sodium.crypto_core_ed25519_scalar_add(
            sodium.crypto_core_ed25519_scalar_mul(challenge, scalar), nonce
        )
    )
    response[-1] |= edwards_public[-1] & _SIGN_BIT  # s < 2**253: its top bit is free
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


def is_prime_order_point(public_raw: bytes) -> bool:
    """Whether the u-coordinate `public_raw` is reduced and names a point of prime order.

    That is libsignal's PublicKey::is_canonical: u below 2**255 - 19 (top bit clear), on
    the curve rather than its twist, not u = -1 (no Edwards form), and in the prime-order
    subgroup. The check runs natively: the birational map y = (u - 1) / (u + 1) gives the
    Edwards point, with the same order, and libsodium's is_valid_point refuses one off the
    curve, outside the main subgroup or of small order. Public data: timing is no concern.
    """
    if len(public_raw) != KEY_LENGTH:
        return False
    u = int.from_bytes(public_raw, "little")
    if u >= _P or u == _P - 1:
        return False
    sodium = _sodium()
    y = (u - 1) * pow(u + 1, -1, _P) % _P
    return bool(sodium.crypto_core_ed25519_is_valid_point(y.to_bytes(KEY_LENGTH, "little")))


def _clamp(private: bytes) -> bytes:
    clamped = bytearray(private)
    clamped[0] &= 0b1111_1000
    clamped[-1] &= 0b0111_1111
    clamped[-1] |= 0b0100_0000
    return bytes(clamped)


def _sha512(*parts: bytes) -> bytes:
    digest = hashlib.sha512()
    for part in parts:
        digest.update(part)
    return digest.digest()
