"""The small chat page: create a connection key, approve requests, talk to an agent."""

from pathlib import Path

from aiohttp import web

_STATIC = Path(__file__).parent / "static"


async def index(_request: web.Request) -> web.FileResponse:
    return web.FileResponse(_STATIC / "chat.html")


def routes() -> list[web.AbstractRouteDef]:
    return [web.get("/", index), web.static("/_emulator/static", _STATIC)]
