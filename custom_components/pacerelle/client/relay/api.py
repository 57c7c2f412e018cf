"""The agent's REST API (prekeys, blobs, group keys), always with a valid runtime token.

A call refused with 401/403 is retried once with a newly issued token (the relay may have
expired ours a little early); a second refusal is a PacerelleAuthError for the caller.
"""

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import quote

import aiohttp

from ..errors import PacerelleApiError, PacerelleAuthError
from ..limits import (
    MAX_BLOB_BYTES,
    MAX_DIGEST_CHARS,
    MAX_GROUP_KEY_ENVELOPES,
    MAX_PREKEYS_PER_UPLOAD,
)
from . import answers
from .http import request_bytes, request_json
from .tokens import RuntimeTokens


class AgentApi:
    """REST calls of one agent on an injected aiohttp session."""

    def __init__(
        self, session: aiohttp.ClientSession, server_url: str, tokens: RuntimeTokens
    ) -> None:
        self._session = session
        self._base = server_url.rstrip("/")
        self._tokens = tokens

    async def put_prekey_bundle(self, bundle: Mapping[str, Any]) -> None:
        await self._with_token(
            lambda token: request_json(
                self._session,
                "PUT",
                self._base + "/agent/prekey-bundle",
                token=token,
                json_body=bundle,
            )
        )

    async def post_one_time_prekeys(self, prekeys: list[dict[str, Any]]) -> None:
        """Upload one-time prekeys, in chunks the server accepts."""
        for start in range(0, len(prekeys), MAX_PREKEYS_PER_UPLOAD):
            body = {"one_time_prekeys": prekeys[start : start + MAX_PREKEYS_PER_UPLOAD]}
            await self._with_token(partial(self._post_json, "/agent/one-time-prekeys", body))

    async def _post_json(self, path: str, body: Mapping[str, Any], token: str) -> dict[str, Any]:
        return await request_json(
            self._session, "POST", self._base + path, token=token, json_body=body
        )

    async def group_keys(self, conversation_id: str) -> list[dict[str, Any]]:
        """The group key envelopes addressed to this agent in a conversation."""
        url = f"{self._base}/agent/group-keys?conversation_id={quote(conversation_id, safe='')}"
        body = await self._with_token(lambda token: self._get_json_list(url, token))
        return body

    async def upload_blob(self, ciphertext: bytes) -> dict[str, Any]:
        """Store an encrypted file; returns `{id, sha256?}`."""
        if len(ciphertext) > MAX_BLOB_BYTES:
            raise PacerelleApiError(413, "the file is too large")
        return await self._with_token(
            lambda token: self._raw("POST", self._base + "/agent/blobs", token, ciphertext)
        )

    async def download_blob(self, blob_id: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        """The ciphertext of a blob; a PacerelleResponseError past `limit` bytes (at most
        MAX_BLOB_BYTES)."""
        url = f"{self._base}/agent/blobs/{quote(blob_id, safe='')}"
        bound = min(limit, MAX_BLOB_BYTES)
        return await self._with_token(lambda token: self._download(url, token, bound))

    async def _with_token[T](self, call: Callable[[str], Awaitable[T]]) -> T:
        credential = await self._tokens.valid()
        try:
            return await call(credential.token)
        except PacerelleAuthError:
            self._tokens.invalidate(credential.token)
        credential = await self._tokens.valid()
        return await call(credential.token)

    async def _get_json_list(self, url: str, token: str) -> list[dict[str, Any]]:
        # The group keys answer is a JSON list, which request_json does not take.
        raw = await request_bytes(self._session, "GET", url, token=token)
        return answers.json_list(raw, "group keys", max_items=MAX_GROUP_KEY_ENVELOPES)

    async def _raw(self, method: str, url: str, token: str, data: bytes) -> dict[str, Any]:
        raw = await request_bytes(self._session, method, url, token=token, data=data)
        value = answers.json_object(raw, "blob upload")
        stored: dict[str, Any] = {"id": answers.identifier(value, "id")}
        if value.get("sha256") is not None:
            stored["sha256"] = answers.text(value, "sha256", max_chars=MAX_DIGEST_CHARS)
        return stored

    async def _download(self, url: str, token: str, limit: int) -> bytes:
        return await request_bytes(self._session, "GET", url, token=token, limit=limit)
