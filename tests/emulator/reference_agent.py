"""A minimal agent over the reference Signal peer, for tests of the gateway and the demo.

It speaks the protocol as Pacerelle's SDK does (same peer names, history-v1, ACK_READ),
with aiohttp instead of blocking calls.
"""

import base64
import json
import os
import uuid
from typing import Any

import aiohttp
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.helpers.reference_peer import ReferencePeer

from .state import Json


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class ReferenceAgent:
    """One agent: its Signal store, its token and at most one gateway connection."""

    def __init__(
        self, session: aiohttp.ClientSession, base_url: str, agent_id: str, token: str
    ) -> None:
        self.session = session
        self.base_url = base_url
        self.agent_id = agent_id
        self.token = token
        self.peer = ReferencePeer(f"agent:{agent_id}")
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.history_keys: dict[str, Json] = {}
        self._next_id = 1

    @property
    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def publish(self, prekeys: int = 5, features: tuple[str, ...] = ("history-v1",)) -> None:
        """Publish a bundle and `prekeys` one-time prekeys, as the SDK does at connect."""
        signed_id = self._next_id
        bundles = []
        for _ in range(prekeys):
            self._next_id += 1
            bundles.append(self.peer.generate_prekey_bundle(self._next_id, signed_id, signed_id))
        last = bundles[-1]
        body = {
            "registration_id": last.registration_id,
            "device_id": last.device_id,
            "identity_key": _b64(last.identity_key),
            "signed_prekey_id": last.signed_prekey_id,
            "signed_prekey_public": _b64(last.signed_prekey_public),
            "signed_prekey_signature": _b64(last.signed_prekey_signature),
            "kyber_prekey_id": last.kyber_prekey_id,
            "kyber_prekey_public": _b64(last.kyber_prekey_public),
            "kyber_prekey_signature": _b64(last.kyber_prekey_signature),
            "protocol_features": list(features),
        }
        url = self.base_url + "/agent/prekey-bundle"
        async with self.session.put(url, json=body, headers=self._auth) as response:
            response.raise_for_status()
        prekeys_body = {
            "one_time_prekeys": [
                {"prekey_id": item.prekey_id, "public_key": _b64(item.prekey_public)}
                for item in bundles
            ]
        }
        url = self.base_url + "/agent/one-time-prekeys"
        async with self.session.post(url, json=prekeys_body, headers=self._auth) as response:
            response.raise_for_status()

    async def connect(self) -> aiohttp.ClientWebSocketResponse:
        url = self.base_url.replace("http", "ws", 1) + f"/ws/agent?token={self.token}"
        self.ws = await self.session.ws_connect(url)
        return self.ws

    async def frame(self) -> Json:
        """The next text frame, parsed."""
        assert self.ws is not None
        message = await self.ws.receive(timeout=10)
        if message.type is not aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"gateway sent {message.type!r} ({self.ws.close_code})")
        frame: Json = json.loads(message.data)
        return frame

    def open(self, envelope: Json) -> str:
        """The plaintext of a human's MSG, unwrapping history-v1 like the SDK."""
        raw = base64.b64decode(envelope["payload_b64"])
        if not envelope["encrypted"]:
            return raw.decode()
        text = self.peer.decrypt(self.human_name(envelope), raw).decode()
        if text.startswith('{"type": "pacerelle.delivery"'):
            delivery = json.loads(text)
            self.history_keys[envelope["conversation_id"]] = delivery["history_key"]
            text = delivery["body"]
        return text

    @staticmethod
    def human_name(envelope: Json) -> str:
        """The SDK's session name for the human device behind `envelope`."""
        return (
            f"human:{envelope['from']}:{envelope['conversation_id']}"
            f":device:{envelope.get('from_device_id')}"
        )

    async def ack(self, envelope: Json) -> None:
        assert self.ws is not None
        await self.ws.send_json(
            {
                "type": "ACK_READ",
                "to": envelope["from"],
                "message_id": envelope["id"],
                "conversation_id": envelope["conversation_id"],
            }
        )

    async def reply(self, envelope: Json, text: str, *, history: bool = True, **extra: Any) -> str:
        """Answer `envelope`'s sender on the device it wrote from; returns the message id."""
        assert self.ws is not None
        message_id = str(uuid.uuid4())
        remote = self.human_name(envelope)
        frame: Json = {
            "type": "MSG",
            "id": message_id,
            "conversation_id": envelope["conversation_id"],
            "to": envelope["from"],
            "to_device_id": envelope.get("from_device_id"),
            "payload_b64": _b64(self.peer.encrypt(remote, text.encode())),
            "encrypted": True,
            "reply_to_message_id": envelope["id"],
        }
        key = self.history_keys.get(envelope["conversation_id"])
        if history and key is not None:
            frame["history_record"] = self._history_record(frame, text, key)
        frame.update(extra)
        await self.ws.send_json(frame)
        return message_id

    async def upload_file(self, data: bytes, name: str, mime: str, **media: int) -> Json:
        """Encrypt and upload a file as the SDK's `send_media` does; returns its secret
        attachment (`media`: `width`, `height`, `duration_ms`)."""
        key, iv = AESGCM.generate_key(bit_length=256), os.urandom(12)
        url = self.base_url + "/agent/blobs"
        headers = {**self._auth, "Content-Type": "application/octet-stream"}
        sealed = AESGCM(key).encrypt(iv, data, None)
        async with self.session.post(url, data=sealed, headers=headers) as response:
            response.raise_for_status()
            blob = await response.json()
        return {
            "id": str(uuid.uuid4()),
            "blob_id": blob["id"],
            "key_b64": _b64(key),
            "iv_b64": _b64(iv),
            "name": name,
            "mime": mime,
            "size": len(data),
            **media,
        }

    async def reply_files(self, envelope: Json, text: str, files: list[Json]) -> str:
        """Answer with a `chat.message` carrying `files` (from `upload_file`); the envelope
        shows only their redacted public part, as the SDK sends it."""
        public = [
            {
                "id": item["id"],
                "name": "attachment",
                "mime": "application/octet-stream",
                "size": item["size"],
                "blob_id": item["blob_id"],
            }
            for item in files
        ]
        payload = {"kind": "chat.message", "text": text, "attachments": files}
        return await self.reply(envelope, json.dumps(payload), attachments=public)

    def _history_record(self, frame: Json, text: str, key: Json) -> Json:
        aad = (
            f"pacerelle:conversation-history:v1:{frame['conversation_id']}:{frame['id']}:"
            f"{self.agent_id}:agent:{key['key_id']}:{key['epoch']}"
        ).encode()
        iv = os.urandom(12)
        sealed = AESGCM(base64.b64decode(key["raw_key_b64"])).encrypt(iv, text.encode(), aad)
        return {
            "key_id": key["key_id"],
            "epoch": key["epoch"],
            "iv_b64": _b64(iv),
            "ciphertext_b64": _b64(sealed),
            "aad_version": 1,
        }

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        self.peer.close()
