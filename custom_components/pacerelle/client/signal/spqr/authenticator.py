"""MAC keys binding each epoch's ML-KEM header and ciphertext to the session (authenticator.rs)."""

import hmac
from dataclasses import dataclass

from ..errors import SignalError, SignalErrorKind
from . import kdf

MAC_SIZE = 32
KEY_SIZE = 32


@dataclass(frozen=True, slots=True)
class Authenticator:
    """A root key ratcheted with every epoch's secret and the MAC key derived with it."""

    root_key: bytes
    mac_key: bytes

    @classmethod
    def new(cls, root_key: bytes, epoch: int) -> Authenticator:
        """Start from the session's auth key, as if updating all-zero keys with it."""
        return cls(bytes(KEY_SIZE), bytes(KEY_SIZE)).update(epoch, root_key)

    def update(self, epoch: int, key: bytes) -> Authenticator:
        """Mix an epoch's secret into the root key; both keys change."""
        info = kdf.AUTHENTICATOR_UPDATE + kdf.u64_be(epoch)
        out = kdf.hkdf_sha256(kdf.ZERO_SALT, self.root_key + key, info, 2 * KEY_SIZE)
        return Authenticator(out[:KEY_SIZE], out[KEY_SIZE:])

    def mac_ct(self, epoch: int, ciphertext: bytes) -> bytes:
        """The MAC the encapsulating side sends after ct2 over ct1 || ct2."""
        return self._mac(kdf.CIPHERTEXT_MAC, epoch, ciphertext)

    def mac_hdr(self, epoch: int, header: bytes) -> bytes:
        """The MAC the key-generating side sends after the encapsulation key's header."""
        return self._mac(kdf.HEADER_MAC, epoch, header)

    def verify_ct(self, epoch: int, ciphertext: bytes, mac: bytes) -> None:
        """Refuse a ciphertext whose MAC does not match (Rust: Error::MacVerifyFailed)."""
        if not hmac.compare_digest(mac, self.mac_ct(epoch, ciphertext)):
            raise SignalError(
                SignalErrorKind.PQ_RATCHET, "MAC verification failed: ciphertext MAC is invalid"
            )

    def verify_hdr(self, epoch: int, header: bytes, mac: bytes) -> None:
        """Refuse a header whose MAC does not match (Rust: Error::MacVerifyFailed)."""
        if not hmac.compare_digest(mac, self.mac_hdr(epoch, header)):
            raise SignalError(
                SignalErrorKind.PQ_RATCHET,
                "MAC verification failed: encapsulation key MAC is invalid",
            )

    def _mac(self, label: bytes, epoch: int, data: bytes) -> bytes:
        return kdf.mac_sha256(self.mac_key, label + kdf.u64_be(epoch) + data)
