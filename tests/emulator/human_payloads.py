"""Plaintexts as a Pacerelle app writes and reads them: text, widgets, files, history-v1."""

import base64
import binascii
import json
import os
import secrets
import uuid
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .agent_api import store_blob
from .context import Emulator
from .http_util import ApiError, new_id
from .state import ConversationLog, Installation, Json

HISTORY_FEATURE = "history-v1"
REDACTED_NAME = "attachment"
REDACTED_MIME = "application/octet-stream"
_MEDIA_FIELDS = ("width", "height", "duration_ms")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _upload_file(emulator: Emulator, installation: Installation, item: Any) -> tuple[Json, Json]:
    """Encrypt and upload one file; the secret part travels inside the Signal message."""
    if not isinstance(item, dict) or not isinstance(item.get("data_b64"), str):
        raise ApiError(400, "every attachment needs `data_b64`")
    try:
        data = base64.b64decode(item["data_b64"], validate=True)
    except binascii.Error as err:
        raise ApiError(400, "`data_b64` is not base64") from err
    key = AESGCM.generate_key(bit_length=256)
    iv = os.urandom(12)
    uploaded = store_blob(
        emulator,
        AESGCM(key).encrypt(iv, data, None),
        installation.owner_id,
        installation.conversation_id,
    )
    # A hostile app may choose the id, name and type: tests send those as they are.
    attachment_id = str(item["id"]) if "id" in item else str(uuid.uuid4())
    secret: Json = {
        "id": attachment_id,
        "blob_id": uploaded["id"],
        "key_b64": _b64(key),
        "iv_b64": _b64(iv),
        "name": str(item["name"]) if "name" in item else "file",
        "mime": str(item["mime"]) if "mime" in item else REDACTED_MIME,
        "size": len(data),
        **{name: item[name] for name in _MEDIA_FIELDS if type(item.get(name)) is int},
    }
    public: Json = {
        "id": attachment_id,
        "name": REDACTED_NAME,
        "mime": REDACTED_MIME,
        "size": len(data),
        "blob_id": uploaded["id"],
        "sha256": uploaded["sha256"],
    }
    # ... and may lie about the file: its size (inside and outside), the blob's digest.
    if type(item.get("declared_size")) is int:
        secret["size"] = public["size"] = item["declared_size"]
    if isinstance(item.get("declared_sha256"), str):
        public["sha256"] = item["declared_sha256"]
    return secret, public


def build_plaintext(
    emulator: Emulator, installation: Installation, body: Json
) -> tuple[str, list[Json] | None, str]:
    """(plaintext, public attachments, kind) for an admin `send` body."""
    if isinstance(body.get("plaintext"), str):
        return body["plaintext"], None, "raw"
    if isinstance(body.get("widget_response"), dict):
        answer = body["widget_response"]
        if not isinstance(answer.get("ref"), str):
            raise ApiError(400, "`widget_response.ref` must be the widget id")
        payload: Json = {"type": "widget.response", "id": str(answer.get("id") or uuid.uuid4())}
        payload["ref"] = answer["ref"]
        if "value" in answer:
            payload["value"] = answer["value"]
        if answer.get("cancelled") is True:
            payload["cancelled"] = True
        return json.dumps(payload), None, "widget.response"
    text = body.get("text", "")
    if not isinstance(text, str):
        raise ApiError(400, "`text` must be a string")
    files = body.get("attachments")
    if files:
        if not isinstance(files, list):
            raise ApiError(400, "`attachments` must be a list")
        pairs = [_upload_file(emulator, installation, item) for item in files]
        payload = {"kind": "chat.message", "text": text, "attachments": [s for s, _ in pairs]}
        return json.dumps(payload), [public for _, public in pairs], "chat.message"
    if not text:
        raise ApiError(400, "send needs `text`, `widget_response`, `attachments` or `plaintext`")
    return text, None, "text"


def history_key(log: ConversationLog) -> Json:
    """The conversation's history-v1 key, made once and then always the same."""
    if log.history_key is None:
        log.history_key = {
            "key_id": new_id("hk", 8),
            "epoch": 1,
            "raw_key_b64": _b64(secrets.token_bytes(32)),
        }
    return log.history_key


def wrap_for_history(plaintext: str, key: Json) -> str:
    return json.dumps({"type": "pacerelle.delivery", "v": 1, "body": plaintext, "history_key": key})


def check_history_record(envelope: Json, plaintext: str, key: Json | None) -> str | None:
    """How the agent's history_record compares with what the human decrypted."""
    if key is None or not envelope.get("encrypted"):
        return None
    record = envelope.get("history_record")
    if not isinstance(record, dict):
        return "missing"
    if record.get("key_id") != key["key_id"] or record.get("epoch") != key["epoch"]:
        return "wrong key"
    if record.get("aad_version") != 1:
        return "wrong aad_version"
    aad = (
        f"pacerelle:conversation-history:v1:{envelope['conversation_id']}:{envelope['id']}:"
        f"{envelope['from']}:agent:{key['key_id']}:{key['epoch']}"
    ).encode()
    try:
        opened = AESGCM(base64.b64decode(key["raw_key_b64"])).decrypt(
            base64.b64decode(str(record.get("iv_b64"))),
            base64.b64decode(str(record.get("ciphertext_b64"))),
            aad,
        )
    except (InvalidTag, ValueError, binascii.Error):
        return "does not decrypt"
    return "valid" if opened == plaintext.encode() else "different plaintext"


def describe_plaintext(
    emulator: Emulator, plaintext: str, conversation_id: str | None = None
) -> Json:
    """The kind of an agent's plaintext, its parsed JSON, and any files it carries (opened
    only from `conversation_id`'s blobs when given, as the relay serves a device only those)."""
    try:
        parsed = json.loads(plaintext) if plaintext.startswith("{") else None
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        return {"kind": "text", "payload": None}
    if parsed.get("type") in ("widget.standard", "widget.update"):
        return {"kind": parsed["type"], "payload": parsed}
    if parsed.get("kind") == "chat.message":
        files = parsed.get("attachments")
        return {
            "kind": "chat.message",
            "payload": parsed,
            "files": [_open_file(emulator, item, conversation_id) for item in files]
            if isinstance(files, list)
            else [],
        }
    return {"kind": "json", "payload": parsed}


class UnreadableFileError(Exception):
    """A file of a message that the person's device cannot open; the message says why."""


def open_file_bytes(emulator: Emulator, item: Json, conversation_id: str | None = None) -> bytes:
    """The plaintext of one attachment (its blob decrypted with the key the message holds).

    With `conversation_id`, a blob of another conversation is unknown: a message may name
    any blob id, the relay lets a device read only its conversation's."""
    blob_id = str(item.get("blob_id"))
    record = emulator.state.blobs.get(blob_id)
    if conversation_id is not None and (
        record is None or record.conversation_id != conversation_id
    ):
        raise UnreadableFileError("unknown blob")
    data = emulator.storage.get_blob(blob_id)
    if data is None:
        raise UnreadableFileError("unknown blob")
    try:
        return AESGCM(base64.b64decode(str(item.get("key_b64")))).decrypt(
            base64.b64decode(str(item.get("iv_b64"))), data, None
        )
    except (InvalidTag, ValueError, binascii.Error) as err:
        raise UnreadableFileError("does not decrypt") from err


def _open_file(emulator: Emulator, item: Any, conversation_id: str | None) -> Json:
    if not isinstance(item, dict):
        return {"error": "not an object"}
    result: Json = {key: item.get(key) for key in ("id", "name", "mime", "size")}
    # Media fields as the app reads them: a voice note's duration, a picture's size.
    result.update({name: item[name] for name in _MEDIA_FIELDS if type(item.get(name)) is int})
    try:
        return {**result, "content_b64": _b64(open_file_bytes(emulator, item, conversation_id))}
    except UnreadableFileError as err:
        return {**result, "error": str(err)}
