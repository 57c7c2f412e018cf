"""HKDF-SHA256 as spqr's kdf.rs uses it, and the labels that make its outputs distinct."""

import hmac

HASH_NAME = "sha256"
HASH_SIZE = 32
ZERO_SALT = bytes(HASH_SIZE)
MAX_OUTPUT = 255 * HASH_SIZE

# Labels exactly as spqr spells them (note the two spaces in CHAIN_START).
CHAIN_START = b"Signal PQ Ratchet V1 Chain  Start"
CHAIN_NEXT = b"Signal PQ Ratchet V1 Chain Next"
CHAIN_ADD_EPOCH = b"Signal PQ Ratchet V1 Chain Add Epoch"
AUTHENTICATOR_UPDATE = b"Signal_PQCKA_V1_MLKEM768:Authenticator Update"
CIPHERTEXT_MAC = b"Signal_PQCKA_V1_MLKEM768:ciphertext"
HEADER_MAC = b"Signal_PQCKA_V1_MLKEM768:ekheader"
SCKA_KEY = b"Signal_PQCKA_V1_MLKEM768:SCKA Key"


def hkdf_sha256(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF with SHA-256 (the chains call it thousands of times: stdlib HMAC is fast)."""
    if not 0 < length <= MAX_OUTPUT:
        raise ValueError(f"HKDF output length {length} out of range")
    prk = hmac.digest(salt, ikm, HASH_NAME)
    blocks: list[bytes] = []
    block = b""
    for counter in range(1, -(-length // HASH_SIZE) + 1):
        block = hmac.digest(prk, block + info + bytes((counter,)), HASH_NAME)
        blocks.append(block)
    return b"".join(blocks)[:length]


def u64_be(value: int) -> bytes:
    """An epoch as spqr feeds it to its KDFs and MACs."""
    return value.to_bytes(8, "big")


EPOCH_SECRET_SIZE = 32


def epoch_secret(epoch: int, shared_secret: bytes) -> bytes:
    """The secret an epoch adds to the chains and the authenticator, from the ML-KEM secret."""
    return hkdf_sha256(ZERO_SALT, shared_secret, SCKA_KEY + u64_be(epoch), EPOCH_SECRET_SIZE)
