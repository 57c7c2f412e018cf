"""Files of a message, sealed and opened by the client only.

The host hands over bytes and names (`OutgoingFile`) and gets bytes back (`Files.download`):
an attachment's key, IV, blob id and digest never leave the client, and the requests the
host is given carry only `PUBLIC_ATTACHMENT_FIELDS` (`Request.for_host`). A file is sealed
with a fresh AES-256-GCM key per file (PROTOCOL.md). An incoming file is taken only as its
sender declared it: at most MAX_FILE_BYTES, exactly its declared size, the relay's digest
of the ciphertext when one is given, and a tag that verifies; anything else is refused
(`SendRefusal.BAD_ATTACHMENT`) and nothing of it is returned.
"""

import base64
import hashlib
import hmac
import logging
import os
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .agent_core import AgentCore, AgentHooks, Download
from .errors import PacerelleError, SendError, SendRefusal
from .limits import (
    GCM_NONCE_BYTES,
    GCM_TAG_BYTES,
    MAX_ANSWER_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES_PER_SEND,
)
from .relay.api import AgentApi
from .relay.http import ResponseTooLargeError
from .values.requests import Request

_LOGGER = logging.getLogger(__name__)

REDACTED_NAME = "attachment"
REDACTED_MIME = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class OutgoingFile:
    """A file to send, as the host read it. `required=False`: the message goes without it
    if its upload fails (a spoken answer: the text matters more)."""

    name: str
    mime: str
    data: bytes
    required: bool = True


def _bad(detail: str) -> SendError:
    return SendError(SendRefusal.BAD_ATTACHMENT, detail)


class Files:
    """Uploads what the host sends, downloads and checks what people sent."""

    def __init__(self, core: AgentCore, api: AgentApi) -> None:
        self._core = core
        self._api = api

    async def upload_all(self, files: Sequence[OutgoingFile]) -> list[dict[str, Any]]:
        """The secret descriptors of `files`, each sealed and uploaded (optional ones whose
        upload failed are left out, logged)."""
        if len(files) > MAX_FILES_PER_SEND:
            raise _bad(f"{len(files)} files, over {MAX_FILES_PER_SEND}")
        for file in files:
            if len(file.data) > MAX_FILE_BYTES:
                raise _bad(f"{file.name!r} is over {MAX_FILE_BYTES} bytes")
        uploaded = []
        for file in files:
            try:
                uploaded.append(await self._upload(file))
            except PacerelleError as err:
                if file.required:
                    raise
                _LOGGER.warning("File %r not uploaded, sent without it: %s", file.name, err)
        return uploaded

    async def _upload(self, file: OutgoingFile) -> dict[str, Any]:
        key = AESGCM.generate_key(bit_length=256)
        iv = os.urandom(GCM_NONCE_BYTES)
        content = file.data
        ciphertext = await self._core.hooks.run_blocking(
            lambda: AESGCM(key).encrypt(iv, content, None)
        )
        stored = await self._api.upload_blob(ciphertext)
        descriptor: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "blob_id": stored["id"],
            "key_b64": base64.b64encode(key).decode(),
            "iv_b64": base64.b64encode(iv).decode(),
            "name": file.name,
            "mime": file.mime,
            "size": len(content),
        }
        if isinstance(stored.get("sha256"), str):
            descriptor["sha256"] = stored["sha256"]
        return descriptor

    async def download(self, attachment: Mapping[str, Any]) -> bytes:
        """An incoming file's bytes, once checked against what its sender declared."""
        try:
            key = base64.b64decode(str(attachment["key_b64"]), validate=True)
            iv = base64.b64decode(str(attachment["iv_b64"]), validate=True)
            blob_id = str(attachment["blob_id"])
        except (KeyError, ValueError) as err:
            raise _bad("no key, IV or blob id") from err
        size = attachment.get("size")
        if type(size) is not int or size < 0:
            raise _bad("no declared size")
        if size > MAX_FILE_BYTES:
            raise _bad(f"declared {size} bytes, over {MAX_FILE_BYTES}")
        expected = size + GCM_TAG_BYTES
        try:
            # Read no further than declared (an error's short answer still fits).
            limit = max(expected, MAX_ANSWER_BYTES)
            ciphertext = await self._api.download_blob(blob_id, limit=limit)
        except ResponseTooLargeError as err:
            raise _bad(f"larger than the {size} bytes declared") from err
        if len(ciphertext) > expected:
            raise _bad(f"larger than the {size} bytes declared")
        if len(ciphertext) < expected:
            raise _bad(f"{max(len(ciphertext) - GCM_TAG_BYTES, 0)} bytes, not the {size} declared")
        digest = attachment.get("sha256")
        if digest is not None and not _digest_matches(ciphertext, digest):
            raise _bad("its digest does not match")
        try:
            return await self._core.hooks.run_blocking(
                lambda: AESGCM(key).decrypt(iv, ciphertext, None)
            )
        except Exception as err:
            raise _bad("the file does not decrypt") from err


def _digest_matches(ciphertext: bytes, digest: object) -> bool:
    """Whether `digest` is the hex SHA-256 of `ciphertext` (the relay's, in the envelope)."""
    actual = hashlib.sha256(ciphertext).hexdigest()
    return isinstance(digest, str) and hmac.compare_digest(actual, digest.strip().lower())


def public_descriptor(secret: Mapping[str, Any]) -> dict[str, Any]:
    """What the relay may see of an attachment: no name, type or dimensions."""
    public = {
        "id": secret["id"],
        "name": REDACTED_NAME,
        "mime": REDACTED_MIME,
        "size": secret["size"],
        "blob_id": secret["blob_id"],
    }
    if "sha256" in secret:
        public["sha256"] = secret["sha256"]
    return public


def secret_descriptor(secret: Mapping[str, Any]) -> dict[str, Any]:
    """What travels inside the encryption (the relay's sha256 stays outside)."""
    return {k: v for k, v in secret.items() if k != "sha256"}


def hooks_for_host(hooks: AgentHooks) -> AgentHooks:
    """`hooks` given each request as the host may see it (`Request.for_host`)."""
    deliver, prepare = hooks.deliver, hooks.prepare

    def delivered(request: Request) -> None:
        deliver(request.for_host())

    def prepared(request: Request, download: Download) -> Awaitable[None] | None:
        return prepare(request.for_host(), download)

    return replace(hooks, deliver=delivered, prepare=prepared)
