"""Group conversations: AES-256-GCM group keys (delivered over Signal) and group payloads.

A member's app encrypts the group key for us with its Signal session, as JSON
`{type: "pacerelle.group.sender_key", v: 1, alg, conversation_id, key_id, epoch,
raw_key_b64}`; `/agent/group-keys` hands these envelopes out. A group MSG's payload is JSON
`{type: "pacerelle.group.message", v: 1, alg, conversation_id, key_id, epoch, iv_b64,
ciphertext_b64}`, sealed once for everyone with the associated data below.
"""

import base64
import binascii
import json
import os
from dataclasses import dataclass, replace
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import PacerelleResponseError
from ..limits import GCM_NONCE_BYTES, MAX_GROUP_KEY_ID_CHARS
from ..relay.answers import parse_json

SENDER_KEY_TYPE = "pacerelle.group.sender_key"
MESSAGE_TYPE = "pacerelle.group.message"
ALGORITHM = "AES-256-GCM"
KEY_BYTES = 32


class GroupError(PacerelleResponseError):
    """A malformed group key or group message, or one we hold no key for."""


@dataclass(frozen=True, slots=True)
class GroupKey:
    conversation_id: str
    key_id: str
    epoch: int
    raw_key: bytes
    # The member whose Signal session delivered the key (never what the key's JSON says);
    # None for keys stored before it was recorded. Who the group's members are comes from
    # these (pacerelle.ask's response_mode). A message sealed with the key is that
    # member's (crypto_jobs), and its trust is that of the session's device and identity
    # key at delivery (trust.py): the relay names the device a group message came from,
    # but only this session proves anything.
    sender_id: str | None = None
    sender_device_id: str | None = None
    sender_identity: bytes | None = None

    @property
    def name(self) -> str:
        return f"{self.conversation_id}:{self.key_id}:{self.epoch}"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": SENDER_KEY_TYPE,
            "v": 1,
            "alg": ALGORITHM,
            "conversation_id": self.conversation_id,
            "key_id": self.key_id,
            "epoch": self.epoch,
            "raw_key_b64": base64.b64encode(self.raw_key).decode(),
        } | self._sender_json()

    def _sender_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.sender_id is not None:
            found["sender_id"] = self.sender_id
        if self.sender_device_id is not None:
            found["sender_device_id"] = self.sender_device_id
        if self.sender_identity is not None:
            found["sender_identity_b64"] = base64.b64encode(self.sender_identity).decode()
        return found

    @classmethod
    def from_json(cls, data: Any) -> GroupKey:
        _check_header(data, SENDER_KEY_TYPE)
        raw = _unb64(data.get("raw_key_b64"))
        if len(raw) != KEY_BYTES:
            raise GroupError("a group key is 32 bytes")
        sender, device = data.get("sender_id"), data.get("sender_device_id")
        identity = data.get("sender_identity_b64")
        return cls(
            data["conversation_id"],
            data["key_id"],
            data["epoch"],
            raw,
            sender if isinstance(sender, str) else None,
            device if isinstance(device, str) else None,
            _unb64(identity) if isinstance(identity, str) else None,
        )


@dataclass(frozen=True, slots=True)
class GroupCiphertext:
    conversation_id: str
    key_id: str
    epoch: int
    iv: bytes
    ciphertext: bytes

    @property
    def key_name(self) -> str:
        return f"{self.conversation_id}:{self.key_id}:{self.epoch}"


def aad(conversation_id: str, key_id: str, epoch: int) -> bytes:
    return f"pacerelle:group-message:v1:{conversation_id}:{key_id}:{epoch}".encode()


def parse_sender_key(
    plaintext: bytes,
    *,
    conversation_id: str,
    key_id: str,
    epoch: int,
    sender_id: str | None = None,
    sender_device_id: str | None = None,
    sender_identity: bytes | None = None,
) -> GroupKey:
    """The key inside a decrypted envelope, which must match the envelope's labels; its
    sender (person, device, identity key) is the session that opened it, whatever the JSON
    claims."""
    try:
        key = GroupKey.from_json(parse_json(plaintext, "group key envelope"))
    except (ValueError, PacerelleResponseError) as err:
        raise GroupError("a group key envelope is not JSON") from err
    if (key.conversation_id, key.key_id, key.epoch) != (conversation_id, key_id, epoch):
        raise GroupError("a group key does not match its envelope")
    return replace(
        key,
        sender_id=sender_id,
        sender_device_id=sender_device_id,
        sender_identity=sender_identity,
    )


def parse_message(payload: bytes) -> GroupCiphertext:
    """A group MSG's payload (decoded payload_b64)."""
    try:
        # Bounded (server_answers): parsed before decryption, on what the relay delivered.
        data = parse_json(payload, "group payload")
    except PacerelleResponseError as err:
        raise GroupError("a group payload is not JSON") from err
    _check_header(data, MESSAGE_TYPE)
    iv = _unb64(data.get("iv_b64"))
    if len(iv) != GCM_NONCE_BYTES:
        raise GroupError("a group message IV is 12 bytes")
    return GroupCiphertext(
        data["conversation_id"],
        data["key_id"],
        data["epoch"],
        iv,
        _unb64(data.get("ciphertext_b64")),
    )


def open_message(key: GroupKey, message: GroupCiphertext) -> str:
    try:
        plain = AESGCM(key.raw_key).decrypt(
            message.iv, message.ciphertext, aad(key.conversation_id, key.key_id, key.epoch)
        )
        return plain.decode()
    except (InvalidTag, UnicodeDecodeError) as err:
        raise GroupError("a group message does not decrypt") from err


def seal_message(key: GroupKey, plaintext: str) -> bytes:
    """The payload (to base64 into payload_b64) of a group MSG."""
    iv = os.urandom(GCM_NONCE_BYTES)
    sealed = AESGCM(key.raw_key).encrypt(
        iv, plaintext.encode(), aad(key.conversation_id, key.key_id, key.epoch)
    )
    body = {
        "type": MESSAGE_TYPE,
        "v": 1,
        "alg": ALGORITHM,
        "conversation_id": key.conversation_id,
        "key_id": key.key_id,
        "epoch": key.epoch,
        "iv_b64": base64.b64encode(iv).decode(),
        "ciphertext_b64": base64.b64encode(sealed).decode(),
    }
    return json.dumps(body, separators=(",", ":")).encode()


def _check_header(data: Any, kind: str) -> None:
    if (
        not isinstance(data, dict)
        or data.get("type") != kind
        or data.get("v") != 1
        or data.get("alg") != ALGORITHM
        or not _label(data.get("conversation_id"))
        or not _label(data.get("key_id"))
        or type(data.get("epoch")) is not int
        or data["epoch"] < 1
    ):
        raise GroupError(f"not a valid {kind}")


def _label(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_GROUP_KEY_ID_CHARS


def _unb64(value: object) -> bytes:
    if not isinstance(value, str):
        raise GroupError("expected base64")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as err:
        raise GroupError("expected base64") from err
