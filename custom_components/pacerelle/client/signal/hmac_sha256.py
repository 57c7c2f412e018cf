"""HMAC-SHA256 and HKDF-SHA256, the engine's only MAC and KDF, on the fastest native code at hand.

An encrypt or a decrypt computes about ten HMACs, each under a new key, so their fixed cost
counts: CPython 3.14's `_hmac` (HACL*, formally verified, constant-time) computes one in about
half the time of `hmac.digest`, which goes through OpenSSL's EVP_MAC with a lookup per call.
Where `_hmac` is missing (another interpreter), `hmac.digest` (OpenSSL) gives the same bytes.
"""

import hmac
import importlib
from collections.abc import Callable

HASH_SIZE = 32
MAX_HKDF_OUTPUT = 255 * HASH_SIZE
_ZERO_SALT = bytes(HASH_SIZE)


def _openssl_hmac_sha256(key: bytes, message: bytes) -> bytes:
    return hmac.digest(key, message, "sha256")


def _native_hmac_sha256() -> Callable[[bytes, bytes], bytes]:
    try:  # a private CPython module (from 3.14), without type stubs
        compute: Callable[[bytes, bytes], bytes] = importlib.import_module("_hmac").compute_sha256
    except ImportError, AttributeError:
        return _openssl_hmac_sha256
    return compute


hmac_sha256: Callable[[bytes, bytes], bytes] = _native_hmac_sha256()
"""HMAC-SHA256(key, message), 32 bytes."""


def hkdf_sha256(salt: bytes | None, ikm: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF-SHA256 (no salt, or an empty one, means 32 zero bytes)."""
    if not 0 < length <= MAX_HKDF_OUTPUT:
        raise ValueError(f"HKDF output length {length} out of range")
    mac = hmac_sha256
    prk = mac(salt or _ZERO_SALT, ikm)
    block = mac(prk, info + b"\x01")
    if length <= HASH_SIZE:
        return block[:length]
    blocks = [block]
    for counter in range(2, -(-length // HASH_SIZE) + 1):
        block = mac(prk, block + info + bytes((counter,)))
        blocks.append(block)
    return b"".join(blocks)[:length]
