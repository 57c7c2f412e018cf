"""Kyber1024 (CRYSTALS-Kyber round 3), the KEM of libsignal's PQXDH prekeys (key type 0x08).

As libsignal (libcrux-ml-kem, "kyber" feature). Round 3 is not ML-KEM, although sizes match:
key generation hashes d alone, G(d); encapsulation takes m = H(coins) and returns
KDF(K' || H(c)) with KDF = SHAKE-256; on a ciphertext that does not re-encrypt,
decapsulation returns KDF(PRF(z || c) || H(c)) (libcrux's rule, invisible to peers).
Secret key layout (3168 bytes): s (1536) || public key (1568) || H(public key) || z.
New prekeys are native (kyber1024_native.py); this code decapsulates under prekeys stored
before that, until they rotate out, and is the test oracle for the native path.
It is not constant-time (secret-indexed lookups, integer arithmetic): the exposure is bounded
by the old prekeys' remaining life, one decapsulation per PreKey message, and no new key made
here outside tests; both candidate secrets are always computed and compared in constant time.
"""

import hmac
import os
from hashlib import sha3_256, sha3_512, shake_256

from ..errors import SignalError, SignalErrorKind
from . import kpke

PUBLIC_KEY_SIZE = 1568
SECRET_KEY_SIZE = 3168
CIPHERTEXT_SIZE = 1568
SHARED_SECRET_SIZE = 32
KEYPAIR_SEED_SIZE = 64  # d || z
ENCAPSULATION_COINS_SIZE = 32

_PARAMS = kpke.KYBER1024
_HASH_SIZE = 32
_PKE_SECRET_SIZE = _PARAMS.vector_size
_PUBLIC_KEY_END = _PKE_SECRET_SIZE + PUBLIC_KEY_SIZE

assert _PARAMS.public_key_size == PUBLIC_KEY_SIZE
assert _PARAMS.ciphertext_size == CIPHERTEXT_SIZE
assert _PUBLIC_KEY_END + 2 * _HASH_SIZE == SECRET_KEY_SIZE


def kdf(key: bytes, ciphertext: bytes) -> bytes:
    """Round 3's final step: SHAKE-256(key || H(c)) cut to 32 bytes (ML-KEM returns `key`)."""
    return shake_256(key + sha3_256(ciphertext).digest()).digest(SHARED_SECRET_SIZE)


def generate_keypair(seed: bytes | None = None) -> tuple[bytes, bytes]:
    """A new key pair (public, secret); `seed` (d || z, 64 bytes) makes it deterministic."""
    if seed is None:
        seed = os.urandom(KEYPAIR_SEED_SIZE)
    if len(seed) != KEYPAIR_SEED_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"Kyber1024 seed of {len(seed)} bytes")
    expanded = sha3_512(seed[: kpke.SEED_SIZE]).digest()
    public, pke_secret = kpke.generate(
        _PARAMS, expanded[: kpke.SEED_SIZE], expanded[kpke.SEED_SIZE :]
    )
    secret = pke_secret + public + sha3_256(public).digest() + seed[kpke.SEED_SIZE :]
    return public, secret


def encapsulate(public: bytes, coins: bytes | None = None) -> tuple[bytes, bytes]:
    """(ciphertext, shared secret) for `public`; `coins` (32 bytes) makes it deterministic."""
    if len(public) != PUBLIC_KEY_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_KEY, f"Kyber1024 public key of {len(public)} bytes"
        )
    if coins is None:
        coins = os.urandom(ENCAPSULATION_COINS_SIZE)
    if len(coins) != ENCAPSULATION_COINS_SIZE:
        raise SignalError(SignalErrorKind.INVALID_STATE, f"Kyber1024 coins of {len(coins)} bytes")
    message = sha3_256(coins).digest()  # round 3 never encrypts raw generator output
    expanded = sha3_512(message + sha3_256(public).digest()).digest()
    ciphertext = kpke.encrypt(_PARAMS, public, message, expanded[_HASH_SIZE:])
    return ciphertext, kdf(expanded[:_HASH_SIZE], ciphertext)


def decapsulate(secret: bytes, ciphertext: bytes) -> bytes:
    """The shared secret for `ciphertext`; a pseudorandom one if it does not re-encrypt."""
    if len(secret) != SECRET_KEY_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_KEY, f"Kyber1024 secret key of {len(secret)} bytes"
        )
    if len(ciphertext) != CIPHERTEXT_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_MESSAGE, f"Kyber1024 ciphertext of {len(ciphertext)} bytes"
        )
    public = secret[_PKE_SECRET_SIZE:_PUBLIC_KEY_END]
    public_hash = secret[_PUBLIC_KEY_END : _PUBLIC_KEY_END + _HASH_SIZE]
    rejection_seed = secret[_PUBLIC_KEY_END + _HASH_SIZE :]

    message = kpke.decrypt(_PARAMS, secret[:_PKE_SECRET_SIZE], ciphertext)
    expanded = sha3_512(message + public_hash).digest()
    expected = kpke.encrypt(_PARAMS, public, message, expanded[_HASH_SIZE:])

    accepted = kdf(expanded[:_HASH_SIZE], ciphertext)
    rejection_key = shake_256(rejection_seed + ciphertext).digest(_HASH_SIZE)
    rejected = kdf(rejection_key, ciphertext)
    return accepted if hmac.compare_digest(expected, ciphertext) else rejected
