"""history-v1: the conversation history key a user's app hands over, and the records we seal.

The app wraps its payload as `{"type": "pacerelle.delivery", "v": 1, "body", "history_key"}`
inside the Signal encryption. We keep the key per conversation (a different key for the same
conversation is refused: rotation would need an explicit protocol step) and attach to each
encrypted outgoing MSG a `history_record`: AES-256-GCM of the plaintext under that key.
"""

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import PacerelleResponseError
from ..limits import GCM_NONCE_BYTES, MAX_GROUP_KEY_ID_CHARS

DELIVERY_TYPE = "pacerelle.delivery"
HISTORY_EPOCH = 1
AAD_VERSION = 1
KEY_BYTES = 32


class HistoryKeyError(PacerelleResponseError):
    """A malformed delivery wrapper, or a history key that conflicts with the one we hold."""


@dataclass(frozen=True, slots=True)
class HistoryKey:
    key_id: str
    epoch: int
    raw_key: bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "epoch": self.epoch,
            "raw_key_b64": base64.b64encode(self.raw_key).decode(),
        }

    @classmethod
    def from_json(cls, data: Any) -> HistoryKey:
        """A key as the app sends it; HistoryKeyError unless exactly well-formed."""
        if not isinstance(data, Mapping) or set(data) != {"key_id", "epoch", "raw_key_b64"}:
            raise HistoryKeyError("a history key has exactly key_id, epoch and raw_key_b64")
        key_id = data["key_id"]
        if (
            not isinstance(key_id, str)
            or not 0 < len(key_id) <= MAX_GROUP_KEY_ID_CHARS
            or ":" in key_id
            or not key_id.isprintable()
        ):
            raise HistoryKeyError("invalid history key id")
        if type(data["epoch"]) is not int or data["epoch"] != HISTORY_EPOCH:
            raise HistoryKeyError("unsupported history key epoch")
        try:
            raw = base64.b64decode(str(data["raw_key_b64"]), validate=True)
        except binascii.Error:
            raw = b""
        if len(raw) != KEY_BYTES:
            raise HistoryKeyError("a history key is 32 bytes")
        return cls(key_id, HISTORY_EPOCH, raw)


def unwrap_delivery(plaintext: str) -> tuple[str, HistoryKey | None]:
    """(the real payload, the history key) of a delivery wrapper; (plaintext, None) otherwise."""
    if not plaintext.startswith("{"):
        return plaintext, None
    try:
        wrapper = json.loads(plaintext)
    except (ValueError, RecursionError):  # a sender's deep nesting is text, not a fault
        return plaintext, None
    if not isinstance(wrapper, dict) or wrapper.get("type") != DELIVERY_TYPE:
        return plaintext, None
    body = wrapper.get("body")
    if wrapper.get("v") != 1 or not isinstance(body, str):
        raise HistoryKeyError("invalid history delivery wrapper")
    return body, HistoryKey.from_json(wrapper.get("history_key"))


def check_key(held: HistoryKey | None, received: HistoryKey) -> None:
    """Refuse a history key other than the one held for the conversation."""
    if held is not None and held != received:
        raise HistoryKeyError("the conversation's history key changed")


def aad(conversation_id: str, message_id: str, agent_id: str, key: HistoryKey) -> bytes:
    """PROTOCOL.md's associated data for an agent's history record."""
    return (
        f"pacerelle:conversation-history:v1:{conversation_id}:{message_id}:"
        f"{agent_id}:agent:{key.key_id}:{key.epoch}"
    ).encode()


def seal_record(
    plaintext: str, key: HistoryKey, *, conversation_id: str, message_id: str, agent_id: str
) -> dict[str, Any]:
    """The `history_record` of an outgoing MSG."""
    iv = os.urandom(GCM_NONCE_BYTES)
    sealed = AESGCM(key.raw_key).encrypt(
        iv, plaintext.encode(), aad(conversation_id, message_id, agent_id, key)
    )
    return {
        "key_id": key.key_id,
        "epoch": key.epoch,
        "iv_b64": base64.b64encode(iv).decode(),
        "ciphertext_b64": base64.b64encode(sealed).decode(),
        "aad_version": AAD_VERSION,
    }
