"""Faults a test switches on with POST /_emulator/faults, applied to the public API."""

import asyncio
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from .http_util import ApiError, json_error
from .state import Json

ADMIN_PREFIX = "/_emulator"


@dataclass
class Faults:
    """Sticky faults: they stay until changed or reset. Never persisted."""

    runtime_token_status: int | None = None
    delay_ms: int = 0
    gateway_status: int | None = None
    route_status: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> Json:
        return asdict(self)

    def update(self, body: Json) -> None:
        if body.get("reset") is True:
            for name, value in vars(Faults()).items():
                setattr(self, name, value)
        if "runtime_token_status" in body:
            self.runtime_token_status = _optional_status(body["runtime_token_status"])
        if "gateway_status" in body:
            self.gateway_status = _optional_status(body["gateway_status"])
        if "delay_ms" in body:
            delay = body["delay_ms"]
            if type(delay) is not int or not 0 <= delay <= 60_000:
                raise ApiError(400, "`delay_ms` must be an integer from 0 to 60000")
            self.delay_ms = delay
        if "route_status" in body:
            routes = body["route_status"]
            if not isinstance(routes, dict):
                raise ApiError(400, "`route_status` must map paths to statuses")
            self.route_status = {
                str(path): status
                for path, raw in routes.items()
                if (status := _optional_status(raw)) is not None
            }


def _optional_status(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 100 <= value <= 599:
        raise ApiError(400, "a status must be null or an HTTP status code")
    return value


def faults_middleware(faults: Faults) -> Any:
    """Delays and forced statuses for everything but the admin API and the chat page."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if path.startswith(ADMIN_PREFIX) or path == "/":
            return await handler(request)
        if faults.delay_ms:
            await asyncio.sleep(faults.delay_ms / 1000)
        status = faults.route_status.get(path)
        if status is not None:
            return json_error(status, f"fault injected on {path}")
        return await handler(request)

    return middleware
