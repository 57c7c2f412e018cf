"""ML-KEM-768 with encapsulation split in two, as SPQR v1 sends it (spqr's incremental_mlkem768.rs).

The public key streams as header pk1 = rho || H(ek) (64 bytes) and pk2 = t (1152 bytes,
ByteEncode_12), as libcrux's "incremental" API defines. ct1 = Compress_10(u) (960 bytes)
needs only the header; ct2 = Compress_4(v) (128 bytes) also needs t; ct1 || ct2 is an
ordinary ML-KEM-768 ciphertext, so key generation and decapsulation run natively in
`cryptography` from the 64-byte FIPS 203 seed, all we keep as the secret key.
The state from encaps1 to encaps2 is ours (NTT(r), e2, then m): it holds one encapsulation's
secret coins, so treat it as a secret and drop it after encaps2. This part is pure Python,
not constant-time (no native library splits encapsulation); acceptable because its secrets
are used once, giving a timing observer no repeated measurements under one key.
"""

import hmac
import os
from dataclasses import dataclass
from hashlib import sha3_256, sha3_512

from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey

from ..errors import SignalError, SignalErrorKind
from . import kpke
from .encoding import decode, encode, encoded_size, has_only_reduced
from .ntt import Q, prepare

HEADER_SIZE = 64
ENCAPSULATION_KEY_SIZE = 1152
CIPHERTEXT1_SIZE = 960
CIPHERTEXT2_SIZE = 128
SHARED_SECRET_SIZE = 32
SEED_SIZE = 64  # d || z, the FIPS 203 decapsulation key seed
RANDOMNESS_SIZE = 32

_PARAMS = kpke.MLKEM768
_RANK = _PARAMS.rank
_POLY_SIZE = encoded_size(kpke.COEFFICIENT_BITS)
_RHO_SIZE = kpke.SEED_SIZE
ENCAPSULATION_STATE_SIZE = (_RANK + 1) * _POLY_SIZE + RANDOMNESS_SIZE

assert _PARAMS.vector_size == ENCAPSULATION_KEY_SIZE
assert (_PARAMS.u_size, _PARAMS.v_size) == (CIPHERTEXT1_SIZE, CIPHERTEXT2_SIZE)


@dataclass(frozen=True, slots=True)
class Keys:
    """A key pair: ek (t) and hdr (rho || H(t || rho)) are public, dk (the seed) is secret."""

    ek: bytes
    dk: bytes
    hdr: bytes


def generate(seed: bytes | None = None) -> Keys:
    """A new key pair; `seed` (64 bytes, d || z) makes it deterministic."""
    if seed is None:
        seed = os.urandom(SEED_SIZE)
    if len(seed) != SEED_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"ML-KEM-768 seed of {len(seed)} bytes")
    public = MLKEM768PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw()
    ek, rho = public[:ENCAPSULATION_KEY_SIZE], public[ENCAPSULATION_KEY_SIZE:]
    return Keys(ek=ek, dk=seed, hdr=rho + sha3_256(public).digest())


def ek_matches_header(ek: bytes, hdr: bytes) -> bool:
    """Whether ek and hdr are one valid public key (libcrux's validate_pk_bytes).

    The hash must match and every coefficient of t must be below q (the FIPS 203
    encapsulation key check).
    """
    if len(hdr) != HEADER_SIZE or len(ek) != ENCAPSULATION_KEY_SIZE:
        return False
    digest = sha3_256(ek + hdr[:_RHO_SIZE]).digest()
    return hmac.compare_digest(digest, hdr[_RHO_SIZE:]) and has_only_reduced(ek, _RANK)


def encaps1(hdr: bytes, randomness: bytes | None = None) -> tuple[bytes, bytes, bytes]:
    """(ct1, encapsulation state, shared secret) from the header alone."""
    if len(hdr) != HEADER_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"ML-KEM-768 header of {len(hdr)} bytes")
    if randomness is None:
        randomness = os.urandom(RANDOMNESS_SIZE)
    if len(randomness) != RANDOMNESS_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, f"ML-KEM-768 randomness of {len(randomness)} bytes"
        )
    expanded = sha3_512(randomness + hdr[_RHO_SIZE:]).digest()
    shared_secret, coins = expanded[:SHARED_SECRET_SIZE], expanded[SHARED_SECRET_SIZE:]
    ct1, r_hat, error2 = kpke.encrypt_u(_PARAMS, hdr[:_RHO_SIZE], coins)
    state = (
        kpke.encode_ntt_vector([even + odd for even, odd, _ in r_hat])
        + encode([value % Q for value in error2], kpke.COEFFICIENT_BITS)
        + randomness
    )
    return ct1, state, shared_secret


def encaps2(ek: bytes, es: bytes) -> bytes:
    """ct2 from the encapsulation key and the state encaps1 returned."""
    if len(ek) != ENCAPSULATION_KEY_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"ML-KEM-768 key of {len(ek)} bytes")
    if len(es) != ENCAPSULATION_STATE_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, f"ML-KEM-768 encapsulation state of {len(es)} bytes"
        )
    r_hat = [prepare(poly) for poly in kpke.decode_ntt_vector(es, _RANK)]
    error2_start = _RANK * _POLY_SIZE
    error2 = decode(es[error2_start : error2_start + _POLY_SIZE], kpke.COEFFICIENT_BITS)
    message = es[error2_start + _POLY_SIZE :]
    return kpke.encrypt_v(_PARAMS, ek, r_hat, error2, message)


def decaps(dk: bytes, ct1: bytes, ct2: bytes) -> bytes:
    """The shared secret (native FIPS 203 decapsulation, implicit rejection included)."""
    if len(dk) != SEED_SIZE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"ML-KEM-768 seed of {len(dk)} bytes")
    if len(ct1) != CIPHERTEXT1_SIZE or len(ct2) != CIPHERTEXT2_SIZE:
        raise SignalError(
            SignalErrorKind.INVALID_MESSAGE,
            f"ML-KEM-768 ciphertext parts of {len(ct1)} and {len(ct2)} bytes",
        )
    return MLKEM768PrivateKey.from_seed_bytes(dk).decapsulate(ct1 + ct2)
