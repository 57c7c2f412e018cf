"""HKDF-SHA256 as spqr's kdf.rs uses it, and the labels that make its outputs distinct."""

from ..hmac_sha256 import MAX_HKDF_OUTPUT, hmac_sha256
from ..hmac_sha256 import hkdf_sha256 as _hkdf_sha256

HASH_NAME = "sha256"
HASH_SIZE = 32
ZERO_SALT = bytes(HASH_SIZE)
MAX_OUTPUT = MAX_HKDF_OUTPUT

# Labels exactly as spqr spells them (note the two spaces in CHAIN_START).
CHAIN_START = b"Signal PQ Ratchet V1 Chain  Start"
CHAIN_NEXT = b"Signal PQ Ratchet V1 Chain Next"
CHAIN_ADD_EPOCH = b"Signal PQ Ratchet V1 Chain Add Epoch"
AUTHENTICATOR_UPDATE = b"Signal_PQCKA_V1_MLKEM768:Authenticator Update"
CIPHERTEXT_MAC = b"Signal_PQCKA_V1_MLKEM768:ciphertext"
HEADER_MAC = b"Signal_PQCKA_V1_MLKEM768:ekheader"
SCKA_KEY = b"Signal_PQCKA_V1_MLKEM768:SCKA Key"


def hkdf_sha256(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF with SHA-256 (the chains call it thousands of times: native HMAC)."""
    return _hkdf_sha256(salt, ikm, info, length)


def mac_sha256(key: bytes, data: bytes) -> bytes:
    """HMAC-SHA256, as spqr's authenticator computes its MACs."""
    return hmac_sha256(key, data)


def u64_be(value: int) -> bytes:
    """An epoch as spqr feeds it to its KDFs and MACs."""
    return value.to_bytes(8, "big")


EPOCH_SECRET_SIZE = 32


def epoch_secret(epoch: int, shared_secret: bytes) -> bytes:
    """The secret an epoch adds to the chains and the authenticator, from the ML-KEM secret."""
    return hkdf_sha256(ZERO_SALT, shared_secret, SCKA_KEY + u64_be(epoch), EPOCH_SECRET_SIZE)
