"""One WebSocket connection to the agent gateway, on an injected aiohttp session.

The runtime token rides in the URL's query (the protocol's choice), so the URL is never
put in an error message or a log line.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Self

import aiohttp

from ..errors import PacerelleApiError, PacerelleAuthError, PacerelleConnectionError
from ..limits import HANDSHAKE_TIMEOUT, MAX_FRAME_BYTES, PING_INTERVAL, RECEIVE_TIMEOUT
from .frames import FrameError, InboundFrame, parse_frame

_LOGGER = logging.getLogger(__name__)

GATEWAY_PATH = "/ws/agent"
CLOSE_TOKEN_EXPIRED = 4401
CLOSE_REVOKED = 4403


def gateway_url(server_url: str) -> str:
    """The gateway's URL without the token: http(s) becomes ws(s)."""
    return server_url.rstrip("/").replace("http", "ws", 1) + GATEWAY_PATH


class GatewayConnection:
    """An open gateway WebSocket: frames in, text frames out."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        # Our own pings (not aiohttp's heartbeat, whose timers can outlive a close).
        self._pinger = asyncio.create_task(self._ping(), name="pacerelle-gateway-ping")

    @classmethod
    async def open(cls, session: aiohttp.ClientSession, server_url: str, token: str) -> Self:
        """Connect with `token`; PacerelleAuthError if the relay refuses it,
        PacerelleConnectionError if it does not complete the handshake within HANDSHAKE_TIMEOUT."""
        try:
            async with asyncio.timeout(HANDSHAKE_TIMEOUT):
                ws = await session.ws_connect(
                    gateway_url(server_url),
                    params={"token": token},
                    timeout=aiohttp.ClientWSTimeout(ws_close=10.0),
                    max_msg_size=MAX_FRAME_BYTES,
                    autoclose=True,
                    autoping=True,
                )
        except aiohttp.WSServerHandshakeError as err:
            if err.status in (401, 403):
                raise PacerelleAuthError(err.status, "the gateway refused the token") from None
            raise PacerelleApiError(err.status, "the gateway refused the connection") from None
        except (aiohttp.ClientError, TimeoutError) as err:
            raise PacerelleConnectionError(f"gateway unreachable: {type(err).__name__}") from None
        return cls(ws)

    @property
    def closed(self) -> bool:
        return self._ws.closed

    @property
    def close_code(self) -> int | None:
        return self._ws.close_code

    async def frames(self) -> AsyncIterator[InboundFrame]:
        """The relay's frames until the connection closes; malformed ones are logged, skipped."""
        while True:
            try:
                message = await self._ws.receive(timeout=RECEIVE_TIMEOUT)
            except TimeoutError:
                _LOGGER.debug("Gateway silent for %s s: closing", RECEIVE_TIMEOUT)
                await self.close()
                return
            if message.type is aiohttp.WSMsgType.TEXT:
                try:
                    frame = parse_frame(message.data)
                except FrameError as err:
                    _LOGGER.warning("Ignoring a malformed gateway frame: %s", err)
                    continue
                if frame is not None:
                    yield frame
            elif message.type is aiohttp.WSMsgType.BINARY:
                _LOGGER.warning("Ignoring a binary gateway frame")
            elif message.type is aiohttp.WSMsgType.ERROR:
                if self._ws.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG:
                    # Unreadable, so it cannot be acknowledged: a relay that redelivers it
                    # at every connection keeps the agent reconnecting (docs/DEVELOPING.md,
                    # "The relay's bounds").
                    _LOGGER.warning(
                        "The relay sent a frame over %d bytes: the connection ends", MAX_FRAME_BYTES
                    )
                else:
                    _LOGGER.debug("Gateway connection error: %s", message.data)
                return
            else:  # CLOSE, CLOSING, CLOSED
                return

    async def send(self, text: str) -> None:
        """Write one text frame; PacerelleConnectionError if the connection is gone."""
        if self._ws.closed:
            raise PacerelleConnectionError("the gateway connection is closed")
        try:
            await self._ws.send_str(text)
        except (aiohttp.ClientError, ConnectionError, RuntimeError) as err:
            raise PacerelleConnectionError(f"gateway write failed: {type(err).__name__}") from None

    async def close(self) -> None:
        self._pinger.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._pinger
        await self._ws.close()

    async def _ping(self) -> None:
        while not self._ws.closed:
            await asyncio.sleep(PING_INTERVAL)
            with contextlib.suppress(aiohttp.ClientError, ConnectionError, RuntimeError):
                await self._ws.ping()
