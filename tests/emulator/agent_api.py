"""The agent's HTTP API: prekey bundle, one-time prekeys, blobs, group keys."""

import base64
import binascii
import hashlib
from typing import Any

from aiohttp import web

from .context import Emulator, emulator_of
from .http_util import ApiError, bearer_token, new_id, read_json_object
from .state import AgentKeys, BlobRecord, Installation, Json

MAX_PREKEYS_PER_UPLOAD = 100
MAX_STORED_PREKEYS = 1000
MAX_KEY_ID = 2**32 - 1
MAX_REGISTRATION_ID = 0x3FFF
GCM_TAG_BYTES = 16
# Serialized key sizes (type byte + key) and XEdDSA signatures.
EC_KEY_BYTES, EC_KEY_TYPE = 33, 0x05
KYBER1024_KEY_BYTES, KYBER1024_KEY_TYPE = 1569, 0x08
SIGNATURE_BYTES = 64


def authenticate_agent(emulator: Emulator, token: str | None) -> Installation:
    """The installation behind a live runtime token, or 401 as for any bad token."""
    runtime = emulator.state.runtime_tokens.get(token or "")
    if runtime is None or runtime.expires_at <= emulator.now():
        raise ApiError(401, "the agent token is unknown or expired")
    installation = emulator.state.installations.get(runtime.agent_id)
    if installation is None or installation.revoked:
        raise ApiError(401, "the installation was revoked")
    return installation


def _agent(request: web.Request) -> Installation:
    return authenticate_agent(emulator_of(request), bearer_token(request))


def _decode_key(body: Json, name: str, size: int, key_type: int | None = None) -> str:
    value = body.get(name)
    try:
        raw = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
    except binascii.Error:
        raw = b""
    if len(raw) != size or (key_type is not None and raw[0] != key_type):
        raise ApiError(400, f"`{name}` must be base64 of {size} bytes")
    return str(value)


def _key_id(body: Json, name: str, maximum: int = MAX_KEY_ID) -> int:
    value = body.get(name)
    if type(value) is not int or not 0 <= value <= maximum:
        raise ApiError(400, f"`{name}` must be an integer from 0 to {maximum}")
    return value


async def put_prekey_bundle(request: web.Request) -> web.Response:
    installation = _agent(request)
    emulator = emulator_of(request)
    body = await read_json_object(request)
    features = body.get("protocol_features", [])
    if not isinstance(features, list) or not all(isinstance(item, str) for item in features):
        raise ApiError(400, "`protocol_features` must be a list of strings")
    device_id = _key_id(body, "device_id", 127)
    if device_id < 1:
        raise ApiError(400, "`device_id` must be at least 1")
    bundle: Json = {
        "registration_id": _key_id(body, "registration_id", MAX_REGISTRATION_ID),
        "device_id": device_id,
        "identity_key": _decode_key(body, "identity_key", EC_KEY_BYTES, EC_KEY_TYPE),
        "signed_prekey_id": _key_id(body, "signed_prekey_id"),
        "signed_prekey_public": _decode_key(
            body, "signed_prekey_public", EC_KEY_BYTES, EC_KEY_TYPE
        ),
        "signed_prekey_signature": _decode_key(body, "signed_prekey_signature", SIGNATURE_BYTES),
        "kyber_prekey_id": _key_id(body, "kyber_prekey_id"),
        "kyber_prekey_public": _decode_key(
            body, "kyber_prekey_public", KYBER1024_KEY_BYTES, KYBER1024_KEY_TYPE
        ),
        "kyber_prekey_signature": _decode_key(body, "kyber_prekey_signature", SIGNATURE_BYTES),
        "protocol_features": features,
    }
    keys = emulator.state.keys_for(installation.agent_id)
    previous = keys.bundle
    if previous is not None and previous["identity_key"] != bundle["identity_key"]:
        # One-time prekeys belong to the identity that made them.
        keys.one_time_prekeys.clear()
        emulator.record("agent_identity_changed", agent_id=installation.agent_id)
    keys.bundle = bundle
    emulator.commit()
    emulator.record("prekey_bundle_published", agent_id=installation.agent_id)
    return web.json_response({"ok": True, "one_time_prekeys": len(keys.one_time_prekeys)})


def _store_prekeys(keys: AgentKeys, uploaded: list[Json]) -> None:
    ids = {item["prekey_id"] for item in uploaded}
    kept = [item for item in keys.one_time_prekeys if item["prekey_id"] not in ids]
    # Past the cap, the oldest keys go first: they are the likeliest to be stale.
    keys.one_time_prekeys = [*kept, *uploaded][-MAX_STORED_PREKEYS:]


async def post_one_time_prekeys(request: web.Request) -> web.Response:
    installation = _agent(request)
    emulator = emulator_of(request)
    body = await read_json_object(request)
    items: Any = body.get("one_time_prekeys")
    if not isinstance(items, list) or not items:
        raise ApiError(400, "`one_time_prekeys` must be a non-empty list")
    if len(items) > MAX_PREKEYS_PER_UPLOAD:
        raise ApiError(413, f"at most {MAX_PREKEYS_PER_UPLOAD} one-time prekeys per upload")
    uploaded: list[Json] = []
    for item in items:
        if not isinstance(item, dict):
            raise ApiError(400, "every one-time prekey must be an object")
        uploaded.append(
            {
                "prekey_id": _key_id(item, "prekey_id"),
                "public_key": _decode_key(item, "public_key", EC_KEY_BYTES, EC_KEY_TYPE),
            }
        )
    if len({item["prekey_id"] for item in uploaded}) != len(uploaded):
        raise ApiError(400, "one-time prekey ids must be unique")
    keys = emulator.state.keys_for(installation.agent_id)
    _store_prekeys(keys, uploaded)
    emulator.commit()
    emulator.record("one_time_prekeys_uploaded", agent_id=installation.agent_id, count=len(items))
    return web.json_response({"stored": len(keys.one_time_prekeys)})


def store_blob(emulator: Emulator, data: bytes, uploaded_by: str, conversation_id: str) -> Json:
    if len(data) < GCM_TAG_BYTES:
        raise ApiError(400, "a blob is AES-256-GCM ciphertext and tag: at least 16 bytes")
    if len(data) > emulator.config.max_blob_bytes:
        raise ApiError(413, "the blob is too large")
    record = BlobRecord(
        blob_id=new_id("blob"),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        uploaded_by=uploaded_by,
        conversation_id=conversation_id,
    )
    emulator.storage.put_blob(record.blob_id, data)
    emulator.state.blobs[record.blob_id] = record
    emulator.commit()
    return {"id": record.blob_id, "sha256": record.sha256, "size": record.size}


async def post_blob(request: web.Request) -> web.Response:
    installation = _agent(request)
    if request.content_type != "application/octet-stream":
        raise ApiError(415, "blobs are uploaded as application/octet-stream")
    data = await request.read()
    result = store_blob(
        emulator_of(request), data, installation.agent_id, installation.conversation_id
    )
    return web.json_response(result, status=201)


async def get_blob(request: web.Request) -> web.Response:
    installation = _agent(request)
    emulator = emulator_of(request)
    record = emulator.state.blobs.get(request.match_info["blob_id"])
    readable = record is not None and (
        record.uploaded_by == installation.agent_id
        or record.conversation_id == installation.conversation_id
    )
    data = emulator.storage.get_blob(record.blob_id) if record and readable else None
    if data is None:
        raise ApiError(404, "unknown blob")
    return web.Response(body=data, content_type="application/octet-stream")


async def get_group_keys(request: web.Request) -> web.Response:
    installation = _agent(request)
    emulator = emulator_of(request)
    conversation_id = request.query.get("conversation_id", "")
    if not conversation_id:
        raise ApiError(400, "`conversation_id` is required")
    envelopes = [
        {key: value for key, value in item.items() if key != "agent_id"}
        for item in emulator.state.group_keys
        if item.get("agent_id") == installation.agent_id
        and item.get("conversation_id") == conversation_id
    ]
    if not envelopes and conversation_id != installation.conversation_id:
        raise ApiError(403, "the agent is not a member of this conversation")
    return web.json_response(envelopes)


def routes() -> list[web.AbstractRouteDef]:
    return [
        web.put("/agent/prekey-bundle", put_prekey_bundle),
        web.post("/agent/one-time-prekeys", post_one_time_prekeys),
        web.post("/agent/blobs", post_blob),
        web.get("/agent/blobs/{blob_id}", get_blob),
        web.get("/agent/group-keys", get_group_keys),
    ]
