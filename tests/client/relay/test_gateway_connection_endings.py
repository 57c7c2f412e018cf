"""How a gateway connection ends, against a WebSocket server of the test's own on loopback.

Each scenario is a relay that misbehaves in one precise way (binary frames, garbage, a
frame over the size cap, silence, a dropped TCP connection); the test asserts what the
client yields and how it reports the ending.
"""

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from custom_components.pacerelle.client.errors import (
    PacerelleApiError,
    PacerelleAuthError,
    PacerelleConnectionError,
)
from custom_components.pacerelle.client.limits import MAX_FRAME_BYTES
from custom_components.pacerelle.client.relay import gateway
from custom_components.pacerelle.client.relay.frames import RelayError
from custom_components.pacerelle.client.relay.gateway import (
    CLOSE_TOKEN_EXPIRED,
    GatewayConnection,
    gateway_url,
)

TOKEN = "secret-runtime-token"
type Script = Callable[[web.WebSocketResponse], Awaitable[None]]


class Relay:
    """Serves /ws/agent with whatever `script` the test sets; records the pings it got."""

    def __init__(self) -> None:
        self.script: Script | None = None
        self.status: int | None = None  # refuse the handshake with this HTTP status
        self.stall: asyncio.Event | None = None  # answer the handshake only once it is set
        self.delay = 0.0  # seconds before answering the handshake
        self.pings = 0
        self.done = asyncio.Event()
        self.transport: asyncio.Transport | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(self.delay)
        if self.stall is not None:
            await self.stall.wait()
        if self.status is not None:
            return web.Response(status=self.status)
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        self.transport = request.transport
        assert self.script is not None
        await self.script(ws)
        self.done.set()
        return ws


@pytest.fixture
async def relay(socket_enabled: None) -> AsyncIterator[tuple[Relay, str]]:
    relay = Relay()
    app = web.Application()
    app.router.add_get("/ws/agent", relay.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield relay, str(server.make_url("/")).rstrip("/")
    await server.close()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _collect(connection: GatewayConnection) -> list[object]:
    async with asyncio.timeout(5):
        return [frame async for frame in connection.frames()]


def test_gateway_url_swaps_the_scheme_only() -> None:
    assert gateway_url("https://relay.example/") == "wss://relay.example/ws/agent"
    assert gateway_url("http://127.0.0.1:8080") == "ws://127.0.0.1:8080/ws/agent"


async def test_binary_garbage_and_unknown_frames_are_skipped(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    """Only the well-formed ERROR frame comes out; the relay's close code is kept."""
    server, url = relay

    async def script(ws: web.WebSocketResponse) -> None:
        await ws.send_bytes(b"\x00\x01")
        await ws.send_str("not json")
        await ws.send_str("[1, 2]")
        await ws.send_str(json.dumps({"type": "FUTURE_KIND"}))
        await ws.send_str(json.dumps({"type": "ERROR", "error": "nope", "message_id": "m-1"}))
        await ws.close(code=CLOSE_TOKEN_EXPIRED)

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    try:
        frames = await _collect(connection)
        assert frames == [RelayError("nope", "m-1")]
        assert connection.closed
        assert connection.close_code == CLOSE_TOKEN_EXPIRED
    finally:
        await connection.close()


async def test_an_oversized_frame_ends_the_connection(
    relay: tuple[Relay, str], session: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    """A frame over MAX_FRAME_BYTES is an error: nothing after it is read."""
    server, url = relay

    async def script(ws: web.WebSocketResponse) -> None:
        await ws.send_str("x" * (MAX_FRAME_BYTES + 1))
        await ws.send_str(json.dumps({"type": "ERROR", "error": "after", "message_id": "m-2"}))
        await asyncio.sleep(1)

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    try:
        assert await _collect(connection) == []
        assert connection.closed
        assert connection.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
        assert f"a frame over {MAX_FRAME_BYTES} bytes" in caplog.text  # told, at warning
    finally:
        await connection.close()


async def test_a_silent_relay_is_closed(
    relay: tuple[Relay, str], session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No frame and no pong for RECEIVE_TIMEOUT: the client closes the link and stops."""
    monkeypatch.setattr(gateway, "RECEIVE_TIMEOUT", 0.2)
    monkeypatch.setattr(gateway, "PING_INTERVAL", 60.0)
    server, url = relay
    hold = asyncio.Event()

    async def script(ws: web.WebSocketResponse) -> None:
        await hold.wait()

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    try:
        assert await _collect(connection) == []
        assert connection.closed
    finally:
        hold.set()
        await connection.close()


async def test_pings_are_sent_every_interval(
    relay: tuple[Relay, str], session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateway, "PING_INTERVAL", 0.05)
    server, url = relay
    pinged = asyncio.Event()

    async def script(ws: web.WebSocketResponse) -> None:
        async for message in ws:
            if message.type is aiohttp.WSMsgType.PING:
                server.pings += 1
                if server.pings >= 2:
                    pinged.set()

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    try:
        async with asyncio.timeout(5):
            await pinged.wait()
        assert server.pings >= 2
    finally:
        await connection.close()
    assert connection.closed


async def test_send_after_close_is_a_connection_error(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    server, url = relay
    received: list[str] = []

    async def script(ws: web.WebSocketResponse) -> None:
        async for message in ws:
            if message.type is aiohttp.WSMsgType.TEXT:
                received.append(message.data)

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    await connection.send("hello")
    await connection.close()
    with pytest.raises(PacerelleConnectionError, match="closed"):
        await connection.send("too late")
    async with asyncio.timeout(5):
        await server.done.wait()
    assert received == ["hello"]


async def test_send_on_a_dropped_transport_is_a_connection_error(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    """The relay drops TCP before the client reads: the write fails as a connection error."""
    server, url = relay

    async def script(ws: web.WebSocketResponse) -> None:
        assert server.transport is not None
        server.transport.abort()

    server.script = script
    connection = await GatewayConnection.open(session, url, TOKEN)
    failure: PacerelleConnectionError | None = None
    try:
        async with asyncio.timeout(5):
            await server.done.wait()
            while failure is None:  # until the client's transport has seen the reset
                try:
                    await connection.send("into the void")
                except PacerelleConnectionError as err:
                    failure = err
                await asyncio.sleep(0.02)
        assert "write failed" in str(failure)
    finally:
        await connection.close()


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, PacerelleAuthError), (403, PacerelleAuthError), (502, PacerelleApiError)],
)
async def test_handshake_refusals_are_mapped(
    relay: tuple[Relay, str],
    session: aiohttp.ClientSession,
    status: int,
    error: type[PacerelleApiError],
) -> None:
    server, url = relay
    server.status = status
    with pytest.raises(error) as caught:
        await GatewayConnection.open(session, url, TOKEN)
    assert type(caught.value) is error
    assert caught.value.status == status
    assert TOKEN not in str(caught.value)


async def test_a_handshake_is_given_handshake_timeout(
    relay: tuple[Relay, str], session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relay that answers the upgrade within HANDSHAKE_TIMEOUT connects; one that takes
    the TCP connection and never answers is a connection error after it, not a connect
    held for the session's own timeout (minutes), so the agent retries with backoff."""
    monkeypatch.setattr(gateway, "HANDSHAKE_TIMEOUT", 2.0)
    server, url = relay
    server.script = _hold_until_closed
    server.delay = 0.2
    connection = await GatewayConnection.open(session, url, TOKEN)
    await connection.close()

    server.stall = asyncio.Event()
    try:
        async with asyncio.timeout(20):  # the old code waited for aiohttp's 5 minutes
            with pytest.raises(PacerelleConnectionError) as caught:
                await GatewayConnection.open(session, url, TOKEN)
    finally:
        server.stall.set()
    assert "unreachable: TimeoutError" in str(caught.value)
    assert TOKEN not in str(caught.value)


async def _hold_until_closed(ws: web.WebSocketResponse) -> None:
    async for _message in ws:
        pass


async def test_unreachable_gateway_is_a_connection_error_without_the_token(
    socket_enabled: None, session: aiohttp.ClientSession
) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PacerelleConnectionError) as caught:
        await GatewayConnection.open(session, f"http://127.0.0.1:{port}", TOKEN)
    assert "unreachable" in str(caught.value)
    assert TOKEN not in str(caught.value)
