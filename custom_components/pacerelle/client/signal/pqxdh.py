"""PQXDH as the responder (Bob), as libsignal's pqxdh.rs computes it.

secret = 0xFF * 32 || DH(signed prekey, their identity) || DH(our identity, their base key)
         || DH(signed prekey, their base key) [|| DH(one-time prekey, their base key)]
         || Kyber1024 shared secret
then HKDF-SHA256 (no salt, info "WhisperText_X25519_SHA-256_CRYSTALS-KYBER-1024") gives 96
bytes: the root key, the first chain key, and the authentication key that seeds SPQR.
"""

from dataclasses import dataclass

from . import curve
from .consts import KEY_LENGTH, PUBLIC_KEY_LENGTH
from .errors import SignalError, SignalErrorKind
from .kem import decapsulate_kyber1024
from .ratchet_keys import ChainKey, RootKey, hkdf_sha256

PQXDH_INFO = b"WhisperText_X25519_SHA-256_CRYSTALS-KYBER-1024"
_DISCONTINUITY = b"\xff" * 32


@dataclass(frozen=True, slots=True)
class HandshakeKeys:
    """What PQXDH hands to the ratchets."""

    root_key: RootKey
    chain_key: ChainKey
    pq_auth_key: bytes


def is_canonical_public_key(key: bytes) -> bool:
    """libsignal's PublicKey::is_canonical on a 33-byte serialized key (see curve.py)."""
    return len(key) == PUBLIC_KEY_LENGTH and curve.is_prime_order_point(key[1:])


def accept(
    *,
    identity_private: bytes,
    signed_prekey_private: bytes,
    one_time_prekey_private: bytes | None,
    kyber_secret_key: bytes,
    their_identity: bytes,
    their_base_key: bytes,
    kyber_ciphertext: bytes,
) -> HandshakeKeys:
    """The responder's side: our private keys and the initiator's public material."""
    if not is_canonical_public_key(their_base_key):
        raise SignalError(SignalErrorKind.INVALID_KEY, "incoming base key is invalid")
    secrets = [
        _DISCONTINUITY,
        curve.agree(signed_prekey_private, their_identity[1:]),
        curve.agree(identity_private, their_base_key[1:]),
        curve.agree(signed_prekey_private, their_base_key[1:]),
    ]
    if one_time_prekey_private is not None:
        secrets.append(curve.agree(one_time_prekey_private, their_base_key[1:]))
    secrets.append(decapsulate_kyber1024(kyber_secret_key, kyber_ciphertext))
    okm = hkdf_sha256(None, b"".join(secrets), PQXDH_INFO, 3 * KEY_LENGTH)
    return HandshakeKeys(
        root_key=RootKey(okm[:KEY_LENGTH]),
        chain_key=ChainKey(okm[KEY_LENGTH : 2 * KEY_LENGTH], 0),
        pq_auth_key=okm[2 * KEY_LENGTH :],
    )
