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

# Curve25519 in Montgomery form, for the base key check libsignal makes (is_canonical).
_P = 2**255 - 19
_A24 = 121665
_A = 486662
_ORDER = 2**252 + 27742317777372353535851937790883648493


@dataclass(frozen=True, slots=True)
class HandshakeKeys:
    """What PQXDH hands to the ratchets."""

    root_key: RootKey
    chain_key: ChainKey
    pq_auth_key: bytes


def _ladder_is_identity(u: int, scalar: int) -> bool:
    """Whether [scalar] of the point with u-coordinate `u` is the point at infinity."""
    x2, z2, x3, z3 = 1, 0, u, 1
    swap = 0
    for bit_index in reversed(range(scalar.bit_length())):
        bit = (scalar >> bit_index) & 1
        if swap ^ bit:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % _P, (x2 - z2) % _P
        aa, bb = a * a % _P, b * b % _P
        e = (aa - bb) % _P
        c, d = (x3 + z3) % _P, (x3 - z3) % _P
        da, cb = d * a % _P, c * b % _P
        x3 = (da + cb) ** 2 % _P
        z3 = u * ((da - cb) ** 2) % _P
        x2 = aa * bb % _P
        z2 = e * (aa + _A24 * e) % _P
    if swap:
        z2 = z3
    return z2 == 0


def is_canonical_public_key(key: bytes) -> bool:
    """libsignal's PublicKey::is_canonical: a reduced u-coordinate of a prime-order point.

    That is: below 2**255 - 19 with the top bit clear, on the curve rather than its twist,
    not u = -1 (no Edwards form), and of order dividing the prime subgroup's order.
    """
    if len(key) != PUBLIC_KEY_LENGTH:
        return False
    u = int.from_bytes(key[1:], "little")
    if u >= _P or u in (0, _P - 1):
        return False
    rhs = (u * u % _P * u + _A * u * u + u) % _P
    if pow(rhs, (_P - 1) // 2, _P) != 1:
        return False
    return _ladder_is_identity(u, _ORDER)


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
