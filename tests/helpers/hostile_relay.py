"""A relay that turns hostile on demand: the emulator behind a middleware of the test's own.

Everything else is the real emulator over TCP on 127.0.0.1; while a `Hostility` field is
set, the middleware answers the runtime-token endpoint with hostile bytes, trickles blobs
at a few bytes per second, serves the agent gateway itself to flood it with frames, holds
back the group keys' answers, refuses them or lists envelopes of its own choosing.
"""

import asyncio
import base64
import json
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler

from tests.emulator import EmulatorConfig, create_app
from tests.emulator.access_log import RedactingAccessLogger
from tests.helpers.emulator import EmulatorHandle

RUNTIME_TOKEN_PATH = "/agent-connect/runtime-token"
BLOBS_PATH = "/agent/blobs/"
GATEWAY_PATH = "/ws/agent"
GROUP_KEYS_PATH = "/agent/group-keys"


@dataclass
class Flood:
    """`count` MSG frames of `payload_bytes` random bytes each, sent once `go` is set.

    The frames are built one at a time (the test measures memory), the same payload in all
    of them under different ids. `sent` counts the frames the socket took: it stops
    growing when the agent stops reading and TCP pushes back.
    """

    count: int
    payload_bytes: int
    go: asyncio.Event = field(default_factory=asyncio.Event)
    sent: int = 0

    def frame(self, index: int, payload_b64: str) -> str:
        return json.dumps(
            {
                "type": "MSG",
                "id": f"flood-{index}",
                "conversation_id": "c-flood",
                "from": "u-flood",
                "to": "a-flood",
                "payload_b64": payload_b64,
                "encrypted": True,
            }
        )


@dataclass
class Hostility:
    """What the relay does wrong right now (None: behave)."""

    token_answer: bytes | None = None  # the body of every runtime-token answer
    blob_bytes_per_second: float | None = None  # blob downloads trickle at this rate
    flood: Flood | None = None  # the gateway is ours: it floods the agent
    # A group keys request waits until the event set when it came is set (None: at once).
    group_keys_gate: asyncio.Event | None = None
    # The envelopes listed for the conversation asked about (None: the emulator's own).
    group_keys_answer: Callable[[str], list[dict[str, Any]]] | None = None
    # Group keys requests are refused with this HTTP status (None: answered).
    group_keys_status: int | None = None
    token_requests: int = 0
    blob_downloads_started: int = 0
    group_keys_requests: int = 0


def _middleware(hostility: Hostility) -> web.middleware:  # type: ignore[valid-type]
    @web.middleware
    async def hostile(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == RUNTIME_TOKEN_PATH and request.method == "POST":
            hostility.token_requests += 1
            if hostility.token_answer is not None:
                return web.Response(body=hostility.token_answer, content_type="application/json")
        if request.path == GROUP_KEYS_PATH and request.method == "GET":
            hostility.group_keys_requests += 1
            gate = hostility.group_keys_gate
            if gate is not None:
                await gate.wait()
            status = hostility.group_keys_status
            if status is not None:
                return web.json_response({"error": "refused by the test"}, status=status)
            answer = hostility.group_keys_answer
            if answer is not None:
                return web.json_response(answer(request.query.get("conversation_id", "")))
        if request.path == GATEWAY_PATH and hostility.flood is not None:
            return await _flood(request, hostility.flood)
        if request.path.startswith(BLOBS_PATH) and request.method == "GET":
            rate = hostility.blob_bytes_per_second
            if rate is not None:
                hostility.blob_downloads_started += 1
                return await _trickle(request, await handler(request), rate)
        return await handler(request)

    return hostile


async def _trickle(
    request: web.Request, answer: web.StreamResponse, rate: float
) -> web.StreamResponse:
    """The real answer's body, one byte every 1/rate seconds."""
    if not isinstance(answer, web.Response) or answer.status != 200 or answer.body is None:
        return answer
    body = bytes(answer.body)  # type: ignore[arg-type]
    slow = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    slow.content_length = len(body)
    await slow.prepare(request)
    try:
        for index in range(len(body)):
            await slow.write(body[index : index + 1])
            await asyncio.sleep(1 / rate)
        await slow.write_eof()
    except ConnectionError:
        pass  # the agent gave up (its deadline): what the test expects
    return slow


async def _flood(request: web.Request, flood: Flood) -> web.StreamResponse:
    """A gateway that sends the flood, then reads (and drops) what the agent writes."""
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    await flood.go.wait()
    payload_b64 = base64.b64encode(os.urandom(flood.payload_bytes)).decode()
    for index in range(flood.count):
        await ws.send_str(flood.frame(index, payload_b64))
        flood.sent += 1
    async for _message in ws:
        pass
    return ws


@asynccontextmanager
async def running_hostile_emulator(hostility: Hostility) -> AsyncIterator[EmulatorHandle]:
    """The emulator with `hostility`'s middleware, over TCP on a free loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(replace(EmulatorConfig(), host="127.0.0.1", port=port))
    app.middlewares.append(_middleware(hostility))
    runner = web.AppRunner(app, shutdown_timeout=1, access_log_class=RedactingAccessLogger)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        async with aiohttp.ClientSession() as session:
            yield EmulatorHandle(f"http://127.0.0.1:{port}", app, session)
    finally:
        await runner.cleanup()
        sock.close()
