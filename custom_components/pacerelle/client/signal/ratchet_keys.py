"""The key derivations of the Double Ratchet, as libsignal's ratchet/keys.rs computes them.

Root key + DH output -> (next root key, chain key) with HKDF "WhisperRatchet"; a chain key
steps with HMAC(key, 0x02) and yields a message key seed with HMAC(key, 0x01); the seed gives
(cipher key, MAC key, IV) with HKDF "WhisperMessageKeys", salted by SPQR's key when it has one
(that salt is what makes the ratchet triple).
"""

from dataclasses import dataclass

from .consts import IV_LENGTH, KEY_LENGTH
from .hmac_sha256 import hkdf_sha256, hmac_sha256

ROOT_INFO = b"WhisperRatchet"
MESSAGE_KEYS_INFO = b"WhisperMessageKeys"
_MESSAGE_KEY_SEED = b"\x01"
_CHAIN_KEY_SEED = b"\x02"
_ZERO_SALT = bytes(KEY_LENGTH)
_MESSAGE_KEYS_INFO_1 = MESSAGE_KEYS_INFO + b"\x01"
_MESSAGE_KEYS_INFO_2 = MESSAGE_KEYS_INFO + b"\x02"
_MESSAGE_KEYS_INFO_3 = MESSAGE_KEYS_INFO + b"\x03"

__all__ = ["ChainKey", "MessageKeys", "RootKey", "derive_message_keys", "hkdf_sha256"]


@dataclass(frozen=True, slots=True)
class MessageKeys:
    """The keys of one message: AES-256-CBC key and IV, HMAC-SHA256 key."""

    cipher_key: bytes
    mac_key: bytes
    iv: bytes
    counter: int


def derive_message_keys(seed: bytes, counter: int, pq_key: bytes | None) -> MessageKeys:
    """The message keys of a seed, mixed with SPQR's key for this message when there is one.

    HKDF(pq_key, seed, MESSAGE_KEYS_INFO, 80 bytes) written out (every message runs it): the
    expand blocks are the cipher key, the MAC key, and the IV in the first half of the third.
    """
    prk = hmac_sha256(pq_key or _ZERO_SALT, seed)
    cipher_key = hmac_sha256(prk, _MESSAGE_KEYS_INFO_1)
    mac_key = hmac_sha256(prk, cipher_key + _MESSAGE_KEYS_INFO_2)
    iv = hmac_sha256(prk, mac_key + _MESSAGE_KEYS_INFO_3)[:IV_LENGTH]
    return MessageKeys(cipher_key, mac_key, iv, counter)


@dataclass(frozen=True, slots=True)
class ChainKey:
    """One step of a sending or receiving chain; `index` is the counter of its next message."""

    key: bytes
    index: int

    def next(self) -> ChainKey:
        """The chain key of the following message."""
        return ChainKey(hmac_sha256(self.key, _CHAIN_KEY_SEED), self.index + 1)

    def message_seed(self) -> bytes:
        """The seed of this message's keys (kept as-is for skipped messages, as libsignal)."""
        return hmac_sha256(self.key, _MESSAGE_KEY_SEED)


@dataclass(frozen=True, slots=True)
class RootKey:
    """The root of the Double Ratchet: every DH ratchet step passes through it."""

    key: bytes

    def create_chain(self, dh_output: bytes) -> tuple[RootKey, ChainKey]:
        """The next root key and a new chain from this root and a fresh DH output."""
        okm = hkdf_sha256(self.key, dh_output, ROOT_INFO, 2 * KEY_LENGTH)
        return RootKey(okm[:KEY_LENGTH]), ChainKey(okm[KEY_LENGTH:], 0)
