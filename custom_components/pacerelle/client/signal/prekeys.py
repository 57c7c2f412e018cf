"""The agent's prekey material: identity, signed and Kyber prekeys, one-time prekeys.

Immutable values: every change returns a new `PreKeys`, so the session layer can drop what a
failed decryption would have changed. Time is passed in (Unix seconds): no I/O here.
- The signed and Kyber (last-resort) prekeys rotate together every `ROTATION_INTERVAL`
  (7 days): it bounds what a stolen prekey exposes while keeping bundle publishing rare for a
  home server that may be offline for days.
- A retired pair stays usable for `RETIRED_GRACE` (30 days, as Signal's clients), for a first
  message that waited in the relay's queue. Lookups ignore the clock; expired pairs go at the
  next `rotate_if_due` or `drop_expired` (called at each connect).
- One-time prekeys: `ONE_TIME_PREKEY_TARGET` (50), refilled below `ONE_TIME_PREKEY_LOW_WATER`;
  each is deleted once used.
"""

import binascii
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .curve import KeyPair, serialize_public, xeddsa_sign
from .errors import SignalError, SignalErrorKind
from .kem import kyber1024_native, serialize_kyber_public
from .prekey_records import (
    MAX_PREKEY_ID,
    KyberPreKey,
    OneTimePreKey,
    RetiredPreKeys,
    SignedPreKey,
    b64,
    bounded_int,
    kyber_from,
    kyber_json,
    pair_from,
    pair_json,
    signed_from,
    signed_json,
)

STATE_VERSION = 1
DEVICE_ID = 1
MAX_REGISTRATION_ID = 16380  # libsignal clients draw 1..16380 (a 14-bit field on the wire)
ROTATION_INTERVAL = 7 * 24 * 3600
RETIRED_GRACE = 30 * 24 * 3600
ONE_TIME_PREKEY_TARGET = 50
ONE_TIME_PREKEY_LOW_WATER = 20
PROTOCOL_FEATURES = ("history-v1",)


@dataclass(frozen=True, slots=True)
class PreKeys:
    """All prekey material of one agent (device 1)."""

    registration_id: int
    identity: KeyPair
    signed_prekey: SignedPreKey
    kyber_prekey: KyberPreKey
    retired: tuple[RetiredPreKeys, ...]
    one_time_prekeys: tuple[OneTimePreKey, ...]
    next_signed_prekey_id: int
    next_one_time_prekey_id: int
    device_id: int = DEVICE_ID

    @classmethod
    def create(cls, now: int, one_time_prekeys: int = ONE_TIME_PREKEY_TARGET) -> PreKeys:
        """New material: fresh identity, a signed/Kyber pair, a full set of one-time prekeys."""
        identity = KeyPair.generate()
        signed_id = _random_prekey_id()
        signed, kyber = _signed_pair(identity, signed_id, now)
        keys = cls(
            registration_id=secrets.randbelow(MAX_REGISTRATION_ID) + 1,
            identity=identity,
            signed_prekey=signed,
            kyber_prekey=kyber,
            retired=(),
            one_time_prekeys=(),
            next_signed_prekey_id=_next_id(signed_id),
            next_one_time_prekey_id=_random_prekey_id(),
        )
        return keys.replenish_one_time_prekeys(one_time_prekeys)[0]

    @property
    def identity_key(self) -> bytes:
        """The 33-byte serialized identity public key."""
        return serialize_public(self.identity.public)

    # Rotation

    def rotation_due(self, now: int) -> bool:
        """Whether the signed/Kyber pair is older than the rotation interval."""
        return now - self.signed_prekey.created_at >= ROTATION_INTERVAL

    def rotate(self, now: int) -> PreKeys:
        """A new signed/Kyber pair under a fresh id; the current one joins the retired list."""
        in_use = {self.signed_prekey.prekey_id} | {old.signed.prekey_id for old in self.retired}
        signed_id = _free_id(self.next_signed_prekey_id, in_use)
        signed, kyber = _signed_pair(self.identity, signed_id, now)
        retired = (*self.retired, RetiredPreKeys(self.signed_prekey, self.kyber_prekey, now))
        return replace(
            self,
            signed_prekey=signed,
            kyber_prekey=kyber,
            retired=retired,
            next_signed_prekey_id=_next_id(signed_id),
        ).drop_expired(now)

    def rotate_if_due(self, now: int) -> PreKeys:
        """Rotate when due, and drop retired pairs past their grace period either way."""
        return self.rotate(now) if self.rotation_due(now) else self.drop_expired(now)

    def drop_expired(self, now: int) -> PreKeys:
        """Forget retired pairs whose grace period is over."""
        kept = tuple(old for old in self.retired if now - old.retired_at < RETIRED_GRACE)
        return self if kept == self.retired else replace(self, retired=kept)

    # Lookups by the ids a PreKeySignalMessage names

    def signed_prekey_by_id(self, prekey_id: int) -> SignedPreKey:
        """The current or an in-grace signed prekey; UNKNOWN_PREKEY otherwise."""
        if self.signed_prekey.prekey_id == prekey_id:
            return self.signed_prekey
        for old in self.retired:
            if old.signed.prekey_id == prekey_id:
                return old.signed
        raise SignalError(SignalErrorKind.UNKNOWN_PREKEY, f"no signed prekey {prekey_id}")

    def kyber_prekey_by_id(self, prekey_id: int) -> KyberPreKey:
        """The current or an in-grace Kyber prekey; UNKNOWN_PREKEY otherwise."""
        if self.kyber_prekey.prekey_id == prekey_id:
            return self.kyber_prekey
        for old in self.retired:
            if old.kyber.prekey_id == prekey_id:
                return old.kyber
        raise SignalError(SignalErrorKind.UNKNOWN_PREKEY, f"no Kyber prekey {prekey_id}")

    def one_time_prekey_by_id(self, prekey_id: int) -> OneTimePreKey:
        """A one-time prekey not used yet; UNKNOWN_PREKEY otherwise."""
        for prekey in self.one_time_prekeys:
            if prekey.prekey_id == prekey_id:
                return prekey
        raise SignalError(SignalErrorKind.UNKNOWN_PREKEY, f"no one-time prekey {prekey_id}")

    # One-time prekeys

    def consume_one_time_prekey(self, prekey_id: int) -> PreKeys:
        """This material without the given one-time prekey (UNKNOWN_PREKEY if absent)."""
        self.one_time_prekey_by_id(prekey_id)
        remaining = tuple(p for p in self.one_time_prekeys if p.prekey_id != prekey_id)
        return replace(self, one_time_prekeys=remaining)

    def needs_one_time_prekeys(self) -> bool:
        """Whether fewer than the low-water mark of one-time prekeys remain."""
        return len(self.one_time_prekeys) < ONE_TIME_PREKEY_LOW_WATER

    def replenish_one_time_prekeys(
        self, target: int = ONE_TIME_PREKEY_TARGET
    ) -> tuple[PreKeys, tuple[OneTimePreKey, ...]]:
        """Top the one-time prekeys up to `target`: (new material, the new keys to publish)."""
        in_use = {prekey.prekey_id for prekey in self.one_time_prekeys}
        next_id = self.next_one_time_prekey_id
        created: list[OneTimePreKey] = []
        for _ in range(target - len(self.one_time_prekeys)):
            prekey_id = _free_id(next_id, in_use)
            in_use.add(prekey_id)
            created.append(OneTimePreKey(prekey_id, KeyPair.generate()))
            next_id = _next_id(prekey_id)
        if not created:
            return self, ()
        updated = replace(
            self,
            one_time_prekeys=(*self.one_time_prekeys, *created),
            next_one_time_prekey_id=next_id,
        )
        return updated, tuple(created)

    # Publication bodies

    def bundle_json(self) -> dict[str, Any]:
        """The body of `PUT /agent/prekey-bundle`."""
        return {
            "registration_id": self.registration_id,
            "device_id": self.device_id,
            "identity_key": b64(self.identity_key),
            "signed_prekey_id": self.signed_prekey.prekey_id,
            "signed_prekey_public": b64(serialize_public(self.signed_prekey.key_pair.public)),
            "signed_prekey_signature": b64(self.signed_prekey.signature),
            "kyber_prekey_id": self.kyber_prekey.prekey_id,
            "kyber_prekey_public": b64(serialize_kyber_public(self.kyber_prekey.public)),
            "kyber_prekey_signature": b64(self.kyber_prekey.signature),
            "protocol_features": list(PROTOCOL_FEATURES),
        }

    # Storage

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (keys as standard base64) for the agent's encrypted state file."""
        return {
            "version": STATE_VERSION,
            "registration_id": self.registration_id,
            "device_id": self.device_id,
            "identity": pair_json(self.identity),
            "signed_prekey": signed_json(self.signed_prekey),
            "kyber_prekey": kyber_json(self.kyber_prekey),
            "retired": [
                {
                    "signed_prekey": signed_json(old.signed),
                    "kyber_prekey": kyber_json(old.kyber),
                    "retired_at": old.retired_at,
                }
                for old in self.retired
            ],
            "one_time_prekeys": [
                {"id": prekey.prekey_id, **pair_json(prekey.key_pair)}
                for prekey in self.one_time_prekeys
            ],
            "next_signed_prekey_id": self.next_signed_prekey_id,
            "next_one_time_prekey_id": self.next_one_time_prekey_id,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PreKeys:
        """Material saved by `to_json`; INVALID_STATE if anything is missing or malformed."""
        try:
            if data["version"] != STATE_VERSION:
                raise SignalError(
                    SignalErrorKind.UNSUPPORTED_VERSION, f"prekey state version {data['version']}"
                )
            return cls(
                registration_id=bounded_int(data["registration_id"], 1, MAX_REGISTRATION_ID),
                device_id=bounded_int(data["device_id"], 1, DEVICE_ID),
                identity=pair_from(data["identity"]),
                signed_prekey=signed_from(data["signed_prekey"]),
                kyber_prekey=kyber_from(data["kyber_prekey"]),
                retired=tuple(
                    RetiredPreKeys(
                        signed_from(old["signed_prekey"]),
                        kyber_from(old["kyber_prekey"]),
                        bounded_int(old["retired_at"]),
                    )
                    for old in data["retired"]
                ),
                one_time_prekeys=tuple(
                    OneTimePreKey(bounded_int(item["id"], 1, MAX_PREKEY_ID), pair_from(item))
                    for item in data["one_time_prekeys"]
                ),
                next_signed_prekey_id=bounded_int(data["next_signed_prekey_id"], 1, MAX_PREKEY_ID),
                next_one_time_prekey_id=bounded_int(
                    data["next_one_time_prekey_id"], 1, MAX_PREKEY_ID
                ),
            )
        except (KeyError, TypeError, ValueError, binascii.Error) as err:
            raise SignalError(SignalErrorKind.INVALID_STATE, f"prekey state: {err!r}") from err


def one_time_prekeys_json(prekeys: Iterable[OneTimePreKey]) -> dict[str, Any]:
    """The body of `POST /agent/one-time-prekeys` publishing `prekeys`."""
    return {
        "one_time_prekeys": [
            {
                "prekey_id": prekey.prekey_id,
                "public_key": b64(serialize_public(prekey.key_pair.public)),
            }
            for prekey in prekeys
        ]
    }


def _signed_pair(identity: KeyPair, prekey_id: int, now: int) -> tuple[SignedPreKey, KyberPreKey]:
    """A signed prekey and a Kyber prekey sharing `prekey_id`, both signed by the identity."""
    key_pair = KeyPair.generate()
    signed = SignedPreKey(
        prekey_id=prekey_id,
        key_pair=key_pair,
        signature=xeddsa_sign(identity.private, serialize_public(key_pair.public)),
        created_at=now,
    )
    public, secret = kyber1024_native.generate_keypair()
    kyber = KyberPreKey(
        prekey_id=prekey_id,
        public=public,
        secret=secret,
        signature=xeddsa_sign(identity.private, serialize_kyber_public(public)),
        created_at=now,
    )
    return signed, kyber


def _random_prekey_id() -> int:
    return secrets.randbelow(MAX_PREKEY_ID) + 1


def _next_id(prekey_id: int) -> int:
    """The id after `prekey_id`, wrapping from MAX_PREKEY_ID back to 1 (0 is never used)."""
    return prekey_id % MAX_PREKEY_ID + 1


def _free_id(candidate: int, in_use: set[int]) -> int:
    """The first id from `candidate` on (wrapping) that no stored key holds."""
    while candidate in in_use:
        candidate = _next_id(candidate)
    return candidate
