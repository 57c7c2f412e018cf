"""JSON over HTTP with Pacerelle's conventions, on an injected aiohttp session.

Errors are HTTP status >= 400 with a JSON body whose `error` field is a message; 401 and
403 mean the credential was refused. Bodies are bounded: a hostile or broken server cannot
make us read without limit, and JSON goes through server_answers (bounded size and depth).
"""

from collections.abc import Mapping
from typing import Any

import aiohttp

from ..errors import (
    PacerelleApiError,
    PacerelleAuthError,
    PacerelleConnectionError,
    PacerelleResponseError,
)
from ..limits import HTTP_REQUEST_TIMEOUT, MAX_ANSWER_BYTES, MAX_RELAY_ERROR_CHARS
from .answers import json_object

REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=HTTP_REQUEST_TIMEOUT)


async def request_json(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    token: str | None = None,
    json_body: Mapping[str, Any] | None = None,
    form: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Send one request and return its JSON object body ({} for an empty body)."""
    raw = await request_bytes(session, method, url, token=token, json_body=json_body, form=form)
    return json_object(raw, f"{method} {url}")


class ResponseTooLargeError(PacerelleResponseError):
    """The body grew past the caller's limit: refused, read no further."""


async def request_bytes(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    token: str | None = None,
    json_body: Mapping[str, Any] | None = None,
    form: Mapping[str, str] | None = None,
    data: bytes | None = None,
    limit: int = MAX_ANSWER_BYTES,
) -> bytes:
    """Send one request (JSON, form or octet-stream body) and return its raw body.

    Transport failures, bodies over `limit` and HTTP errors become the client's errors.
    """
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if data is not None:
        headers["Content-Type"] = "application/octet-stream"
    try:
        async with session.request(
            method,
            url,
            headers=headers,
            json=json_body,
            data=form if data is None else data,
            timeout=REQUEST_TIMEOUT,
            allow_redirects=False,
        ) as response:
            raw = await read_bounded(response, limit)
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as err:
        raise PacerelleConnectionError(f"{method} {url}: {err or type(err).__name__}") from err
    if raw is None:
        raise ResponseTooLargeError(f"{method} {url}: response over {limit} bytes")
    if status >= 400:
        message = _error_message(raw, status)
        if status in (401, 403):
            raise PacerelleAuthError(status, message)
        raise PacerelleApiError(status, message)
    return raw


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The whole body, or None as soon as it grows past `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _error_message(raw: bytes, status: int) -> str:
    """The `error` of an error body, or the status alone when there is none to trust."""
    try:
        message = json_object(raw, "error body").get("error")
    except PacerelleResponseError:
        message = None
    if not isinstance(message, str) or not message:
        return f"HTTP {status}"
    return message[:MAX_RELAY_ERROR_CHARS]
