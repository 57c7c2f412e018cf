"""The connection loop: keeps one gateway connection up, renewing its token before expiry.

Connection states: connecting (first attempt) -> connected -> reconnecting (after a drop,
with exponential backoff and jitter capped at backoff_cap) ... -> stopped (by us) or
disconnected (the installation was revoked: the runtime token is refused). A fresh runtime
token is requested before each connection; when it is due for renewal (80 % of its life)
the loop fetches a new one, closes the connection cleanly and opens the next one at once,
holding sends meanwhile (the relay keeps the queue: nothing is lost). Sends made while
offline are queued (values/send_queue.py) and written as soon as a connection is up, first.
"""

import asyncio
import contextlib
import logging
import secrets
import time
from enum import Enum

import aiohttp

from ..agent_core import AgentCore, ConnectionState
from ..errors import PacerelleError
from ..inbox.queue import InboundQueue
from ..limits import MIN_HEALTHY_CONNECTION, STABLE_CONNECTION
from ..outbox.sender import Sender
from ..relay.frames import IdentityChanged, InboundMessage, RefusedMessage, RelayError, build_ack
from ..relay.gateway import CLOSE_TOKEN_EXPIRED, GatewayConnection
from ..relay.refusals import GatewayRefusals
from ..relay.tokens import InstallationRevokedError, RuntimeCredential, RuntimeTokens
from ..state.errors import StoreError
from .prekeys import PrekeyPublisher

_LOGGER = logging.getLogger(__name__)

FRAMES_PER_YIELD = 8  # a backlog is parsed in slices of this many frames


class Ending(Enum):
    """How a connection ended: what the loop does next depends on it."""

    RENEWED = "renewed"  # we replaced it with a new token
    EXPIRED = "expired"  # the relay closed it when the token expired
    FAILED = "failed"  # anything else: back off


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with jitter: between half and all of min(cap, base * 2^attempt)."""
    ceiling = min(cap, base * 2 ** min(attempt, 30))
    jitter = secrets.randbelow(1001) / 1000
    return float(ceiling * (0.5 + jitter / 2))


class ConnectionLoop:
    """One agent's connection, until `stopping` is set or the installation is revoked."""

    def __init__(
        self,
        core: AgentCore,
        session: aiohttp.ClientSession,
        tokens: RuntimeTokens,
        prekeys: PrekeyPublisher,
        sender: Sender,
        inbound: InboundQueue,
        refusals: GatewayRefusals,
        stopping: asyncio.Event,
    ) -> None:
        self._core = core
        self._session = session
        self._tokens = tokens
        self._prekeys = prekeys
        self._sender = sender
        self._inbound = inbound
        self._refusals = refusals
        self._stopping = stopping
        self._prepared: tuple[RuntimeCredential, GatewayConnection] | None = None
        self._first_attempt = True
        self._outage_logged = False  # an outage is logged once at info, its end once

    async def run(self) -> None:
        core = self._core
        attempt = 0
        core.set_state(ConnectionState.CONNECTING)
        async with core.lock:
            await self._sender.queue.recover()
        while not self._stopping.is_set():
            started = time.monotonic()
            failure = "the connection closed"
            try:
                ending = await self._connect_and_serve()
            except InstallationRevokedError:
                _LOGGER.warning("Pacerelle refused the runtime token: the installation was revoked")
                core.set_state(ConnectionState.DISCONNECTED)
                core.hooks.revoked()
                return
            except StoreError:
                # A failed save is no connection failure: logged with its trace, as a bug.
                _LOGGER.exception("Unexpected error in the Pacerelle connection")
                ending = Ending.FAILED
            except PacerelleError as err:
                _LOGGER.debug("Pacerelle connection failed: %s", err)
                failure = str(err)
                ending = Ending.FAILED
            except Exception:
                # Never let the loop die (a failed save, a bug): log, back off, try again.
                _LOGGER.exception("Unexpected error in the Pacerelle connection")
                ending = Ending.FAILED
            if self._stopping.is_set():
                return
            lasted = time.monotonic() - started
            if ending is Ending.RENEWED or (
                ending is Ending.EXPIRED and lasted >= MIN_HEALTHY_CONNECTION
            ):
                attempt = 0
                continue  # token renewal or expiry: reconnect at once, with a new token
            if lasted >= STABLE_CONNECTION:
                attempt = 0
            if not self._outage_logged:
                self._outage_logged = True
                _LOGGER.info("Pacerelle is unreachable (%s); reconnecting", failure)
            core.set_state(ConnectionState.RECONNECTING)
            delay = backoff_delay(attempt, core.config.backoff_base, core.config.backoff_cap)
            attempt += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)

    async def _connect_and_serve(self) -> Ending:
        """One connection, until it ends; how it ended."""
        core = self._core
        if self._prepared is not None:
            credential, connection = self._prepared
            self._prepared = None
        else:
            # The first connection may use the token the host just requested; every
            # reconnection asks for a new one.
            first, self._first_attempt = self._first_attempt, False
            credential = await (self._tokens.valid() if first else self._tokens.fresh())
            await self._prekeys.publish()
            connection = await GatewayConnection.open(
                self._session, core.config.server_url, credential.token
            )
            self._attach(connection)
        serial = core.connection_serial
        core.set_state(ConnectionState.CONNECTED)
        if self._outage_logged:
            self._outage_logged = False
            _LOGGER.info("Pacerelle is reachable again")
        reader = asyncio.create_task(self._read(connection))
        renewed = False
        try:
            await self._sender.flush_queue()
            due = max(credential.renew_at - time.monotonic(), 0.0)
            done, _ = await asyncio.wait({reader}, timeout=due)
            if not done:
                renewed = await self._renew(connection)
                if not renewed and core.connection is connection:
                    await reader  # keep serving until the relay ends it (token expiry)
        finally:
            await connection.close()
            if not reader.done():
                reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            if core.connection is connection:
                core.connection = None
        clean = renewed or self._stopping.is_set()
        await self._sender.connection_ended(serial, clean=clean)
        if renewed:
            return Ending.RENEWED
        if connection.close_code == CLOSE_TOKEN_EXPIRED:
            return Ending.EXPIRED
        return Ending.FAILED

    def _attach(self, connection: GatewayConnection) -> None:
        self._core.connection_serial += 1
        self._core.connection = connection

    async def _renew(self, old: GatewayConnection) -> bool:
        """Replace the connection with one on a new token, before the old token expires.

        Sends wait on the lock meanwhile: none fails, and none is written on the old
        connection after our clean close (which confirms what was written before it).
        """
        core = self._core
        try:
            credential = await self._tokens.fresh()
        except InstallationRevokedError:
            raise
        except PacerelleError as err:
            _LOGGER.info("Could not renew the runtime token yet: %s", err)
            return False
        async with core.lock:
            await old.close()
            core.connection = None
            try:
                connection = await GatewayConnection.open(
                    self._session, core.config.server_url, credential.token
                )
            except PacerelleError as err:
                # The old connection ended cleanly; the loop reconnects from scratch.
                _LOGGER.info("Could not reopen the gateway after renewal: %s", err)
                return True
            self._attach(connection)
        self._prepared = (credential, connection)
        return True

    async def _read(self, connection: GatewayConnection) -> None:
        count = 0
        async for frame in connection.frames():
            count += 1
            if count % FRAMES_PER_YIELD == 0:
                # A backlog arrives all at once; parsing it must not hold the loop.
                await asyncio.sleep(0)
            if isinstance(frame, InboundMessage):
                # Waits while the queue is full: backpressure on the relay (inbox/queue.py).
                await self._inbound.put(frame)
            elif isinstance(frame, RefusedMessage):
                await self._refuse(frame)
            elif isinstance(frame, IdentityChanged):
                # A notice only: the trust door judges the new key when it writes.
                _LOGGER.warning("The identity key of %s changed", frame.peer_id)
            elif isinstance(frame, RelayError) and frame.message_id is not None:
                await self._sender.relay_refused(frame.message_id, frame.error)

    async def _refuse(self, message: RefusedMessage) -> None:
        """Count and log a message refused for good, and acknowledge it (relay/refusals.py)."""
        self._refusals.record(message)
        with contextlib.suppress(PacerelleError):  # not connected: acknowledged when it comes again
            await self._core.write(build_ack(message))
