"""The records of the agent's prekey material and their storage JSON (keys as standard
base64): every value read back is checked (lengths, ranges, a public key matching its
private one), so a damaged state is an INVALID_STATE, never a wrong key.
"""

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .curve import KEY_LENGTH, SIGNATURE_LENGTH, KeyPair
from .kem import is_kyber1024_secret, kyber1024, kyber1024_native

MAX_PREKEY_ID = 0xFFFFFF  # libsignal clients keep prekey ids in 24 bits and wrap


@dataclass(frozen=True, slots=True)
class SignedPreKey:
    """The X25519 signed prekey: its XEdDSA signature is over the 33-byte serialized public key."""

    prekey_id: int
    key_pair: KeyPair
    signature: bytes
    created_at: int


@dataclass(frozen=True, slots=True)
class KyberPreKey:
    """The Kyber1024 prekey: signed over its 1569-byte serialized public key (type 0x08).

    `secret` is the 64-byte seed of a native ML-KEM-1024 key, or for a prekey made before
    the move to native code the 3168-byte round 3 secret key (see kem/__init__.py).
    """

    prekey_id: int
    public: bytes
    secret: bytes = field(repr=False)
    signature: bytes
    created_at: int


@dataclass(frozen=True, slots=True)
class RetiredPreKeys:
    """A replaced signed/Kyber pair, still accepted until `retired_at + RETIRED_GRACE`."""

    signed: SignedPreKey
    kyber: KyberPreKey
    retired_at: int


@dataclass(frozen=True, slots=True)
class OneTimePreKey:
    """An X25519 prekey used by at most one incoming session."""

    prekey_id: int
    key_pair: KeyPair


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(value: Any, length: int | None = None) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"expected a base64 string, got {type(value).__name__}")
    data = base64.b64decode(value, validate=True)
    if length is not None and len(data) != length:
        raise ValueError(f"expected {length} bytes, got {len(data)}")
    return data


def bounded_int(value: Any, low: int = 0, high: int = 2**63) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"integer out of range: {value!r}")
    return value


def pair_json(pair: KeyPair) -> dict[str, Any]:
    return {"private": b64(pair.private), "public": b64(pair.public)}


def pair_from(data: Mapping[str, Any]) -> KeyPair:
    pair = KeyPair.from_private(unb64(data["private"], KEY_LENGTH))
    if pair.public != unb64(data["public"], KEY_LENGTH):
        raise ValueError("public key does not match its private key")
    return pair


def signed_json(prekey: SignedPreKey) -> dict[str, Any]:
    return {
        "id": prekey.prekey_id,
        **pair_json(prekey.key_pair),
        "signature": b64(prekey.signature),
        "created_at": prekey.created_at,
    }


def signed_from(data: Mapping[str, Any]) -> SignedPreKey:
    return SignedPreKey(
        prekey_id=bounded_int(data["id"], 1, MAX_PREKEY_ID),
        key_pair=pair_from(data),
        signature=unb64(data["signature"], SIGNATURE_LENGTH),
        created_at=bounded_int(data["created_at"]),
    )


def kyber_json(prekey: KyberPreKey) -> dict[str, Any]:
    return {
        "id": prekey.prekey_id,
        "public": b64(prekey.public),
        "secret": b64(prekey.secret),
        "signature": b64(prekey.signature),
        "created_at": prekey.created_at,
    }


def kyber_from(data: Mapping[str, Any]) -> KyberPreKey:
    public = unb64(data["public"], kyber1024.PUBLIC_KEY_SIZE)
    secret = unb64(data["secret"])
    if not is_kyber1024_secret(secret):
        raise ValueError(f"Kyber secret of {len(secret)} bytes")
    if len(secret) == kyber1024_native.SEED_SIZE and kyber1024_native.public_key(secret) != public:
        raise ValueError("Kyber public key does not match its seed")
    return KyberPreKey(
        prekey_id=bounded_int(data["id"], 1, MAX_PREKEY_ID),
        public=public,
        secret=secret,
        signature=unb64(data["signature"], SIGNATURE_LENGTH),
        created_at=bounded_int(data["created_at"]),
    )
