"""libsignal's two session messages, version 4, exactly as protocol.rs and wire.proto lay them out.

A serialized message is one version byte (high nibble: message version, low nibble: current
version, so 0x44), the protobuf, and for a SignalMessage an 8-byte truncated HMAC-SHA256 over
the sender's identity key, the receiver's identity key and everything before the MAC.
"""

import hmac
from dataclasses import dataclass, field

from ..consts import (
    CIPHERTEXT_MESSAGE_VERSION,
    KEY_LENGTH,
    KYBER1024_CIPHERTEXT_LENGTH,
    MAC_LENGTH,
    MAX_ADDRESSES_LENGTH,
    MAX_CIPHERTEXT_LENGTH,
    MAX_PQ_RATCHET_LENGTH,
    PRE_KYBER_MESSAGE_VERSION,
    PUBLIC_KEY_LENGTH,
)
from ..errors import SignalError, SignalErrorKind
from ..hmac_sha256 import hmac_sha256
from .protobuf import (
    WireType,
    bytes_field,
    encode_bytes,
    encode_uint32,
    field_key,
    parse,
    uint32_field,
    write_varint,
)

VERSION_BYTE = (CIPHERTEXT_MESSAGE_VERSION << 4) | CIPHERTEXT_MESSAGE_VERSION
DJB_KEY_TYPE = 0x05

# wire.proto field numbers.
_RATCHET_KEY, _COUNTER, _PREVIOUS_COUNTER, _CIPHERTEXT, _PQ_RATCHET, _ADDRESSES = 1, 2, 3, 4, 5, 6
_SIGNAL_SCHEMA = {
    _RATCHET_KEY: bytes_field(PUBLIC_KEY_LENGTH),
    _COUNTER: uint32_field(),
    _PREVIOUS_COUNTER: uint32_field(),
    _CIPHERTEXT: bytes_field(MAX_CIPHERTEXT_LENGTH),
    _PQ_RATCHET: bytes_field(MAX_PQ_RATCHET_LENGTH),
    _ADDRESSES: bytes_field(MAX_ADDRESSES_LENGTH),
}
# The encoded keys of SignalMessage's fields, the version byte ahead of the first one.
_SIGNAL_PREFIX = bytes((VERSION_BYTE,)) + field_key(_RATCHET_KEY, WireType.LENGTH_DELIMITED)
_COUNTER_KEY = field_key(_COUNTER, WireType.VARINT)
_PREVIOUS_COUNTER_KEY = field_key(_PREVIOUS_COUNTER, WireType.VARINT)
_CIPHERTEXT_KEY = field_key(_CIPHERTEXT, WireType.LENGTH_DELIMITED)
_PQ_RATCHET_KEY = field_key(_PQ_RATCHET, WireType.LENGTH_DELIMITED)
_PRE_KEY_ID, _BASE_KEY, _IDENTITY_KEY, _MESSAGE = 1, 2, 3, 4
_REGISTRATION_ID, _SIGNED_PRE_KEY_ID, _KYBER_PRE_KEY_ID, _KYBER_CIPHERTEXT = 5, 6, 7, 8
_PRE_KEY_SCHEMA = {
    _PRE_KEY_ID: uint32_field(),
    _BASE_KEY: bytes_field(PUBLIC_KEY_LENGTH),
    _IDENTITY_KEY: bytes_field(PUBLIC_KEY_LENGTH),
    _MESSAGE: bytes_field(MAX_CIPHERTEXT_LENGTH + 2 * MAX_PQ_RATCHET_LENGTH),
    _REGISTRATION_ID: uint32_field(),
    _SIGNED_PRE_KEY_ID: uint32_field(),
    _KYBER_PRE_KEY_ID: uint32_field(),
    _KYBER_CIPHERTEXT: bytes_field(KYBER1024_CIPHERTEXT_LENGTH),
}


def _invalid(detail: str) -> SignalError:
    return SignalError(SignalErrorKind.INVALID_MESSAGE, detail)


def _check_version(data: bytes) -> None:
    version = data[0] >> 4
    if version <= PRE_KYBER_MESSAGE_VERSION or version > CIPHERTEXT_MESSAGE_VERSION:
        raise SignalError(SignalErrorKind.UNSUPPORTED_VERSION, f"message version {version}")


def _public_key(value: int | bytes | None, name: str) -> bytes:
    # libsignal still tolerates trailing bytes after a key; no client sends them, we refuse.
    if not isinstance(value, bytes):
        raise _invalid(f"missing {name}")
    if len(value) != PUBLIC_KEY_LENGTH or value[0] != DJB_KEY_TYPE:
        raise SignalError(SignalErrorKind.INVALID_KEY, f"{name} is not a Curve25519 public key")
    return value


def _uint(value: int | bytes | None, name: str) -> int:
    if not isinstance(value, int):
        raise _invalid(f"missing {name}")
    return value


def compute_mac(
    mac_key: bytes, sender_identity: bytes, receiver_identity: bytes, body: bytes
) -> bytes:
    """The 8-byte MAC of a SignalMessage: identities bind the message to this pair of users."""
    if len(mac_key) != KEY_LENGTH:
        raise SignalError(SignalErrorKind.INVALID_STATE, "MAC key must be 32 bytes")
    digest = hmac_sha256(mac_key, sender_identity + receiver_identity + body)
    return digest[:MAC_LENGTH]


@dataclass(frozen=True, slots=True)
class SignalMessage:
    """A Double Ratchet message; `serialized` is the exact bytes, MAC included."""

    ratchet_key: bytes
    counter: int
    previous_counter: int
    ciphertext: bytes
    pq_ratchet: bytes
    addresses: bytes | None
    serialized: bytes = field(repr=False)

    @classmethod
    def create(
        cls,
        *,
        mac_key: bytes,
        ratchet_key: bytes,
        counter: int,
        previous_counter: int,
        ciphertext: bytes,
        pq_ratchet: bytes,
        sender_identity: bytes,
        receiver_identity: bytes,
    ) -> SignalMessage:
        """A new message, encoded as prost encodes it (ascending field numbers).

        Joined in one go with the field keys precomputed: this runs for every message sent.
        """
        parts = [
            _SIGNAL_PREFIX,
            write_varint(len(ratchet_key)),
            ratchet_key,
            _COUNTER_KEY,
            write_varint(counter),
            _PREVIOUS_COUNTER_KEY,
            write_varint(previous_counter),
            _CIPHERTEXT_KEY,
            write_varint(len(ciphertext)),
            ciphertext,
        ]
        if pq_ratchet:
            parts += (_PQ_RATCHET_KEY, write_varint(len(pq_ratchet)), pq_ratchet)
        body = b"".join(parts)
        mac = compute_mac(mac_key, sender_identity, receiver_identity, body)
        return cls(ratchet_key, counter, previous_counter, ciphertext, pq_ratchet, None, body + mac)

    @classmethod
    def parse(cls, data: bytes) -> SignalMessage:
        """Parse and bound-check a serialized message (the MAC is checked later, with keys)."""
        if len(data) < MAC_LENGTH + 1:
            raise _invalid(f"SignalMessage of {len(data)} bytes is too short")
        _check_version(data)
        fields = parse(data[1:-MAC_LENGTH], _SIGNAL_SCHEMA)
        ciphertext = fields.get(_CIPHERTEXT)
        if not isinstance(ciphertext, bytes):
            raise _invalid("missing ciphertext")
        pq_ratchet = fields.get(_PQ_RATCHET, b"")
        addresses = fields.get(_ADDRESSES)
        return cls(
            ratchet_key=_public_key(fields.get(_RATCHET_KEY), "ratchet key"),
            counter=_uint(fields.get(_COUNTER), "counter"),
            previous_counter=_uint(fields.get(_PREVIOUS_COUNTER, 0), "previous counter"),
            ciphertext=ciphertext,
            pq_ratchet=pq_ratchet if isinstance(pq_ratchet, bytes) else b"",
            addresses=addresses if isinstance(addresses, bytes) else None,
            serialized=bytes(data),
        )

    def mac_is_valid(
        self, mac_key: bytes, sender_identity: bytes, receiver_identity: bytes
    ) -> bool:
        """Whether the MAC matches, and the message names no addresses.

        libsignal checks an `addresses` field against the two ProtocolAddress names parsed as
        Signal service ids; Pacerelle's names ("human:...", "agent:...") never parse as such, so
        libsignal (and the native agent runtime) refuses any message that carries addresses.
        """
        body, their_mac = self.serialized[:-MAC_LENGTH], self.serialized[-MAC_LENGTH:]
        our_mac = compute_mac(mac_key, sender_identity, receiver_identity, body)
        return hmac.compare_digest(our_mac, their_mac) and self.addresses is None


@dataclass(frozen=True, slots=True)
class PreKeySignalMessage:
    """The initiator's first messages: PQXDH material around a SignalMessage."""

    registration_id: int
    pre_key_id: int | None
    signed_pre_key_id: int
    kyber_pre_key_id: int
    kyber_ciphertext: bytes = field(repr=False)
    base_key: bytes
    identity_key: bytes
    message: SignalMessage
    serialized: bytes = field(repr=False)

    @classmethod
    def parse(cls, data: bytes) -> PreKeySignalMessage:
        """Parse and bound-check a serialized PreKeySignalMessage and its inner message."""
        if not data:
            raise _invalid("empty PreKeySignalMessage")
        _check_version(data)
        fields = parse(data[1:], _PRE_KEY_SCHEMA)
        base_key = _public_key(fields.get(_BASE_KEY), "base key")
        identity_key = _public_key(fields.get(_IDENTITY_KEY), "identity key")
        inner = fields.get(_MESSAGE)
        if not isinstance(inner, bytes):
            raise _invalid("missing inner message")
        signed_pre_key_id = _uint(fields.get(_SIGNED_PRE_KEY_ID), "signed prekey id")
        kyber_id, kyber_ciphertext = fields.get(_KYBER_PRE_KEY_ID), fields.get(_KYBER_CIPHERTEXT)
        if kyber_id is None and kyber_ciphertext is None:
            raise _invalid("Kyber prekey must be present for this session version")
        if not isinstance(kyber_id, int) or not isinstance(kyber_ciphertext, bytes):
            raise _invalid("both or neither Kyber prekey id and ciphertext must be present")
        pre_key_id = fields.get(_PRE_KEY_ID)
        return cls(
            registration_id=_uint(fields.get(_REGISTRATION_ID, 0), "registration id"),
            pre_key_id=pre_key_id if isinstance(pre_key_id, int) else None,
            signed_pre_key_id=signed_pre_key_id,
            kyber_pre_key_id=kyber_id,
            kyber_ciphertext=kyber_ciphertext,
            base_key=base_key,
            identity_key=identity_key,
            message=SignalMessage.parse(inner),
            serialized=bytes(data),
        )

    def encode(self) -> bytes:
        """The serialized message, as libsignal would build it from these fields."""
        body = bytearray([VERSION_BYTE])
        if self.pre_key_id is not None:
            body += encode_uint32(_PRE_KEY_ID, self.pre_key_id)
        body += encode_bytes(_BASE_KEY, self.base_key)
        body += encode_bytes(_IDENTITY_KEY, self.identity_key)
        body += encode_bytes(_MESSAGE, self.message.serialized)
        body += encode_uint32(_REGISTRATION_ID, self.registration_id)
        body += encode_uint32(_SIGNED_PRE_KEY_ID, self.signed_pre_key_id)
        body += encode_uint32(_KYBER_PRE_KEY_ID, self.kyber_pre_key_id)
        body += encode_bytes(_KYBER_CIPHERTEXT, self.kyber_ciphertext)
        return bytes(body)
