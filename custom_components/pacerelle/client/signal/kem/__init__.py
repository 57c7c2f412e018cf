"""Post-quantum KEMs: Kyber1024 for PQXDH prekeys and split ML-KEM-768 for SPQR.

libsignal puts a one-byte key type in front of KEM public keys and ciphertexts on the
wire (rust/protocol/src/kem.rs); 0x08 is Kyber1024 round 3, the only type we speak.

A Kyber prekey's stored secret takes one of two forms, told apart by length:
- 64 bytes: the seed of a native ML-KEM-1024 key (kyber1024_native.py), for every prekey
  made since decapsulation moved to constant-time native code;
- 3168 bytes: a round 3 secret key expanded by the pure-Python kyber1024.py, for prekeys
  made before. They keep working until they rotate out (7 days, then 30 days of grace);
  nothing converts them, since the pure-Python key generation cannot be replayed natively.
"""

from ..errors import SignalError, SignalErrorKind
from . import kyber1024, kyber1024_native

KYBER1024_KEY_TYPE = 0x08


def _serialize(raw: bytes, size: int, what: str) -> bytes:
    if len(raw) != size:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"Kyber1024 {what} of {len(raw)} bytes")
    return bytes((KYBER1024_KEY_TYPE,)) + raw


def _deserialize(data: bytes, size: int, what: str, kind: SignalErrorKind) -> bytes:
    if not data:
        raise SignalError(kind, f"empty KEM {what}")
    if data[0] != KYBER1024_KEY_TYPE:
        raise SignalError(kind, f"KEM {what} of unsupported type {data[0]:#04x}")
    if len(data) != size + 1:
        raise SignalError(kind, f"Kyber1024 {what} of {len(data)} bytes")
    return bytes(data[1:])


def serialize_kyber_public(raw: bytes) -> bytes:
    """0x08 || the 1568-byte public key (1569 bytes)."""
    return _serialize(raw, kyber1024.PUBLIC_KEY_SIZE, "public key")


def deserialize_kyber_public(data: bytes) -> bytes:
    """The raw public key from its serialized form; checks type and length."""
    return _deserialize(data, kyber1024.PUBLIC_KEY_SIZE, "public key", SignalErrorKind.INVALID_KEY)


def serialize_kyber_ciphertext(raw: bytes) -> bytes:
    """0x08 || the 1568-byte ciphertext, as PreKeySignalMessage carries it."""
    return _serialize(raw, kyber1024.CIPHERTEXT_SIZE, "ciphertext")


def deserialize_kyber_ciphertext(data: bytes) -> bytes:
    """The raw ciphertext from its serialized form; checks type and length."""
    return _deserialize(
        data, kyber1024.CIPHERTEXT_SIZE, "ciphertext", SignalErrorKind.INVALID_MESSAGE
    )


def is_kyber1024_secret(secret: bytes) -> bool:
    """Whether `secret` has one of the two stored forms of a Kyber prekey's secret."""
    return len(secret) in (kyber1024_native.SEED_SIZE, kyber1024.SECRET_KEY_SIZE)


def decapsulate_kyber1024(secret: bytes, ciphertext: bytes) -> bytes:
    """The round 3 shared secret under a Kyber prekey, whichever form its secret has."""
    if len(secret) == kyber1024_native.SEED_SIZE:
        return kyber1024_native.decapsulate(secret, ciphertext)
    return kyber1024.decapsulate(secret, ciphertext)  # a prekey made before, until it rotates
