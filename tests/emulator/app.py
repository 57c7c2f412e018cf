"""Builds the emulator's aiohttp application."""

from aiohttp import web

from . import (
    admin,
    agent_api,
    agent_connect,
    approval_page,
    chat_files,
    chat_page,
    gateway,
    groups,
)
from .config import EmulatorConfig
from .context import EMULATOR, Emulator
from .faults import faults_middleware
from .gateway import GatewayHub
from .http_util import error_middleware
from .human_side import HumanSide

# Room for the largest blob plus request overhead.
_BODY_SLACK = 64 * 1024
# The admin `send` carries a file in base64 (4 characters for 3 bytes): a file as large
# as the largest blob must fit in its JSON body.
_BASE64_GROWTH = 4 / 3


def create_app(config: EmulatorConfig | None = None) -> web.Application:
    config = config or EmulatorConfig()
    emulator = Emulator(config)
    emulator.hub = GatewayHub(emulator)
    emulator.humans = HumanSide(emulator)
    app = web.Application(
        middlewares=[error_middleware, faults_middleware(emulator.faults)],
        client_max_size=int(config.max_blob_bytes * _BASE64_GROWTH) + _BODY_SLACK,
    )
    app[EMULATOR] = emulator
    modules = (
        agent_connect,
        approval_page,
        agent_api,
        gateway,
        admin,
        chat_page,
        chat_files,
        groups,
    )
    for module in modules:
        app.add_routes(module.routes())

    async def close_connections(_app: web.Application) -> None:
        await emulator.hub.shutdown()

    async def close_storage(_app: web.Application) -> None:
        emulator.close()

    app.on_shutdown.append(close_connections)
    app.on_cleanup.append(close_storage)
    return app
