"""Small HTTP helpers shared by the routes: JSON errors, bearer tokens, JSON bodies."""

import json
import secrets
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from .state import Json


class ApiError(Exception):
    """Answered as Pacerelle answers errors: the status and a JSON body with `error`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def json_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def bearer_token(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def read_json_object(request: web.Request) -> Json:
    try:
        body: Any = json.loads(await request.read() or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ApiError(400, "the body is not valid JSON") from err
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body


def require_str(body: Json, name: str, *, allow_empty: bool = False) -> str:
    value = body.get(name)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ApiError(400, f"`{name}` must be a non-empty string")
    return value


def new_id(prefix: str, nbytes: int = 12) -> str:
    """Identifiers without colons: Pacerelle's history AAD joins them with colons."""
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def new_secret(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        return json_error(err.status, err.message)
