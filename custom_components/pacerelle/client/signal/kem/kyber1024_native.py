"""Kyber1024 round 3 prekeys on native ML-KEM-1024 (FIPS 203), constant-time.

Round 3 Kyber and ML-KEM share K-PKE, the key formats and the hashes G, H and J; a key
pair made by ML-KEM key generation is a valid round 3 key pair (the public key is the same
t || rho encoding; only how rho and sigma came from the seed differs, which no peer can
see). Decapsulation of any ciphertext c then relates as:

    round 3 (libcrux) shared secret = SHAKE-256(ML-KEM.Decaps(dk, c) || SHA3-256(c))[:32]

- c re-encrypts: both decrypt m', take (K', r') = G(m' || H(ek)) and re-encrypt; ML-KEM
  returns K', round 3 returns KDF(K' || H(c)).
- c does not: ML-KEM returns J(z || c) = SHAKE-256(z || c)[:32], and libcrux's Kyber
  returns KDF(SHAKE-256(z || c)[:32] || H(c)) (see kyber1024.py): the same function of
  the ML-KEM result. tests/client/signal/test_kyber1024_native.py proves both branches against an
  expanded ML-KEM secret key built over our K-PKE, and against libsignal.

We keep the 64-byte ML-KEM seed d || z (FIPS 203's private key format) and let
`cryptography` (OpenSSL) expand it on each decapsulation, which is cheap (~0.1 ms). Its
ML-KEM is constant-time, rejection included (no branch on whether c re-encrypts); what
Python adds, the final SHAKE-256 and SHA3-256, runs in OpenSSL too and sees the result
only as bytes, never branching on them.
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
