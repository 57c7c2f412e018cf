"""Kyber1024 round 3 prekeys on native ML-KEM-1024 (FIPS 203), constant-time.

An ML-KEM key pair is a valid round 3 key pair (same K-PKE, formats and hashes G, H, J), and
for any ciphertext c:

    round 3 (libcrux) shared secret = SHAKE-256(ML-KEM.Decaps(dk, c) || SHA3-256(c))[:32]

in both branches, re-encrypting or not (see kyber1024.py; its test proves both). We keep
the 64-byte seed d || z (FIPS 203's private key format) and let `cryptography` (OpenSSL)
expand it at each decapsulation (~0.1 ms); its ML-KEM is constant-time, rejection included,
and the hashes Python adds run in OpenSSL too.
"""

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM1024PrivateKey

from ..errors import SignalError, SignalErrorKind
from .kyber1024 import CIPHERTEXT_SIZE, KEYPAIR_SEED_SIZE, PUBLIC_KEY_SIZE, kdf

SEED_SIZE = KEYPAIR_SEED_SIZE  # d || z, as FIPS 203 and `cryptography` store it


def unavailable_reason() -> str | None:
    """Why native ML-KEM-1024 cannot run here (an OpenSSL without it), or None if it can."""
    try:
        MLKEM1024PrivateKey.generate()
    except UnsupportedAlgorithm as err:
        return f"cryptography's OpenSSL has no ML-KEM-1024 ({err})"
    return None


def generate_keypair() -> tuple[bytes, bytes]:
    """A new key pair: (public key, 64-byte seed to store)."""
    try:
        key = MLKEM1024PrivateKey.generate()
    except UnsupportedAlgorithm as err:
        raise SignalError(SignalErrorKind.INVALID_STATE, "no native ML-KEM-1024") from err
    public = key.public_key().public_bytes_raw()
    assert len(public) == PUBLIC_KEY_SIZE
    return public, key.private_bytes_raw()


def public_key(seed: bytes) -> bytes:
    """The public key of a stored seed."""
    return _private_key(seed).public_key().public_bytes_raw()


def decapsulate(seed: bytes, ciphertext: bytes) -> bytes:
    """The round 3 shared secret for `ciphertext`; a pseudorandom one if it does not re-encrypt."""
    if len(ciphertext) != CIPHERTEXT_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_MESSAGE, f"Kyber1024 ciphertext of {len(ciphertext)} bytes"
        )
    return kdf(_private_key(seed).decapsulate(ciphertext), ciphertext)


def _private_key(seed: bytes) -> MLKEM1024PrivateKey:
    if len(seed) != SEED_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"ML-KEM-1024 seed of {len(seed)} bytes")
    try:
        return MLKEM1024PrivateKey.from_seed_bytes(seed)
    except UnsupportedAlgorithm as err:
        raise SignalError(SignalErrorKind.INVALID_STATE, "no native ML-KEM-1024") from err
