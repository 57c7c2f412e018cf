"""The HA-free agent: keeps one agent online and exposes what the integration builds on.

Connection states: connecting (first attempt) -> connected -> reconnecting (after a drop,
with exponential backoff and jitter capped at backoff_cap) ... -> stopped (by us) or
disconnected (the installation was revoked: the runtime token is refused). A fresh runtime
token is requested before each connection; when it is due for renewal (80 % of its life)
the agent fetches a new one, closes the connection cleanly and opens the next one at once,
holding sends meanwhile (the relay keeps the queue: nothing is lost). Sends made while
offline are queued (outbox/queue.py) and written as soon as a connection is up, first.
"""

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from functools import partial
from typing import Any

import aiohttp

from .agent_core import AgentConfig, AgentCore, AgentHooks, ConnectionState, Storage
from .agent_data import AgentData
from .agent_restore import MAX_HELD_FOR_REKEY, rekeyed_after_restore
from .conversations.checkpoints import Checkpoint, check_fields
from .conversations.history import MAX_NOTE_CHARS, History, Reply
from .conversations.payloads import chat_payload
from .encrypted_file import StoreError
from .errors import PacerelleError, PacerelleResponseError, SendRefusal
from .inbox.decrypt_failures import DecryptionOutcome
from .inbox.pipeline import InboxPipeline
from .inbox.queue import InboundQueue
from .inbox.requests import Request
from .outbox.queue import DEFAULT_EXPIRE_AFTER
from .outbox.sender import Sender, SendError, public_descriptor, secret_descriptor
from .relay.answers import device_id
from .relay.api import AgentApi
from .relay.frames import IdentityChanged, InboundMessage, RefusedMessage, RelayError, build_ack
from .relay.gateway import CLOSE_TOKEN_EXPIRED, GatewayConnection
from .relay.prekeys import PrekeyPublisher
from .relay.refusals import GatewayRefusals
from .relay.tokens import InstallationRevokedError, RuntimeCredential, RuntimeTokens
from .signal.errors import SignalErrorKind
from .signal.identity import verification_code
from .trust.door import TrustDoor

_LOGGER = logging.getLogger(__name__)

STABLE_CONNECTION = 60.0  # a connection that lasted this long resets the backoff
MIN_HEALTHY_CONNECTION = 1.0  # a shorter life before expiry is backed off: no hot loop
FRAMES_PER_YIELD = 8  # a backlog is parsed in slices of this many frames


class Ending(Enum):
    """How a connection ended: what the loop does next depends on it."""

    RENEWED = "renewed"  # we replaced it with a new token
    EXPIRED = "expired"  # the relay closed it when the token expired
    FAILED = "failed"  # anything else: back off


@dataclass(frozen=True, slots=True)
class AgentStatus:
    state: ConnectionState
    pending: int
    uncertain_sends: int
    queued_sends: int
    verification_code: str
    last_message_at: float | None


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with jitter: between half and all of min(cap, base * 2^attempt)."""
    ceiling = min(cap, base * 2 ** min(attempt, 30))
    jitter = secrets.randbelow(1001) / 1000
    return float(ceiling * (0.5 + jitter / 2))


class Agent:
    def __init__(
        self,
        session: aiohttp.ClientSession,
        config: AgentConfig,
        hooks: AgentHooks,
        tokens: RuntimeTokens,
        data: AgentData,
        extra: dict[str, Any],
        trust: TrustDoor | None = None,
        *,
        store: Storage,
    ) -> None:
        """`trust`: the door with the host's loaded trust book (none: a new, empty one);
        `store`: the agent's own store, loaded (state/agent_store.py), which it commits to."""
        self._session = session
        self._tokens = tokens
        self._rekeyed = False  # prekeys re-keyed once per run at most (agent_restore.py)
        hooks = replace(hooks, decryption=self._watching_prekeys(hooks.decryption))
        door = trust if trust is not None else TrustDoor(config.owner_id)
        self._core = AgentCore(config, hooks, data, extra, door, store=store)
        self._api = AgentApi(session, config.server_url, tokens)
        self._inbox = InboxPipeline(self._core, self._api)
        self._prekeys = PrekeyPublisher(self._core, self._api)
        self._sender = Sender(self._core, self._api)
        self._tasks: list[asyncio.Task[None]] = []
        self._prepared: tuple[RuntimeCredential, GatewayConnection] | None = None
        self._first_attempt = True
        self._outage_logged = False  # an outage is logged once at info, its end once
        self._stopping = asyncio.Event()
        self.refusals = GatewayRefusals()  # messages refused for good on arrival

    # Lifecycle

    def start(self) -> None:
        if self._tasks:
            return
        self._stopping.clear()
        # From now on a send made offline is queued (the connection loop is about to run).
        self._core.set_state(ConnectionState.CONNECTING)
        self._tasks = [
            asyncio.create_task(self._run(), name="pacerelle-agent"),
            asyncio.create_task(self._inbox.run(), name="pacerelle-inbox"),
            asyncio.create_task(
                self._prekeys.keep_up(self._inbox.prekeys_used), name="pacerelle-prekeys"
            ),
            asyncio.create_task(self._sender.queue.run_expiry(), name="pacerelle-expiry"),
        ]

    async def stop(self) -> None:
        """Close the connection cleanly and stop every task."""
        self._stopping.set()
        connection = self._core.connection
        if connection is not None:
            await connection.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._core.state is not ConnectionState.DISCONNECTED:
            self._core.set_state(ConnectionState.STOPPED)

    def _watching_prekeys(
        self, report: Callable[[DecryptionOutcome], None]
    ) -> Callable[[DecryptionOutcome], None]:
        """The host's decryption hook, re-keying prekeys on the first `unknown_prekey`."""

        def decryption(outcome: DecryptionOutcome) -> None:
            report(outcome)
            if outcome.reason == SignalErrorKind.UNKNOWN_PREKEY.value and not self._rekeyed:
                self._rekeyed = True
                self._tasks.append(asyncio.create_task(self._rekey(), name="pacerelle-rekey"))

        return decryption

    async def _rekey(self) -> None:
        """A first message named a prekey this agent never held: most likely its state was
        restored from a backup (a full restore is not seen at start-up): agent_restore.py."""
        try:
            await self._rekey_once()
        except Exception:  # a failed save: never an error out of stop()
            _LOGGER.exception("Could not make new one-time prekeys")

    async def _rekey_once(self) -> None:
        core = self._core
        async with core.lock:
            if len(core.data.signal.prekeys.one_time_prekeys) >= MAX_HELD_FOR_REKEY:
                return
            _LOGGER.warning(
                "A first message names a prekey that agent %s does not hold: its state was "
                "most likely restored from an older copy",
                core.config.agent_id,
            )
            data = await core.hooks.run_blocking(partial(rekeyed_after_restore, core.data))
            await core.commit(data)
        try:
            await self._prekeys.publish()
        except StoreError:
            raise  # a failed save is no failed publication
        except PacerelleError as err:  # they go out with the next connection's publication
            _LOGGER.info("Could not publish the new one-time prekeys yet: %s", err)

    # Status and queries

    @property
    def status(self) -> AgentStatus:
        data = self._core.data
        self._sender.outbox.settle(time.time())
        return AgentStatus(
            state=self._core.state,
            pending=len(data.inbox.pending),
            uncertain_sends=len(data.uncertain),
            queued_sends=len(data.queued),
            verification_code=self.verification_code,
            last_message_at=_last_request_at(data),
        )

    @property
    def verification_code(self) -> str:
        return verification_code(self._core.data.signal.prekeys.identity_key)

    @property
    def data(self) -> AgentData:
        return self._core.data

    @property
    def inbound(self) -> InboundQueue:
        """The bounded queue of incoming messages (its size and high-water marks)."""
        return self._inbox.queue

    @property
    def trust(self) -> TrustDoor:
        """The one door for trust (trust/door.py)."""
        return self._core.trust

    def find_request(self, message_id: str) -> Request | None:
        """A request by id: pending, being handed over, or still in the history."""
        return self._sender.find_request(message_id)

    def pending_requests(self, conversation_id: str | None = None) -> list[Request]:
        return [
            request
            for request in self._core.data.inbox.pending.values()
            if conversation_id is None or request.conversation_id == conversation_id
        ]

    def history(self, conversation_id: str | None = None, limit: int = 50) -> History:
        return self._core.data.history.filtered(conversation_id, max(1, min(limit, 50)))

    def checkpoints(
        self, conversation_id: str | None = None, include_completed: bool = False
    ) -> list[Checkpoint]:
        return self._core.data.checkpoints.listed(conversation_id, include_completed)

    # Actions

    async def send_text(
        self,
        text: str,
        *,
        source_message_id: str | None = None,
        conversation_id: str | None = None,
        to: str | None = None,
        to_device_id: str | None = None,
        reply_to_message_id: str | None = None,
        attachments: Sequence[Mapping[str, Any]] = (),
        expire_after: float = DEFAULT_EXPIRE_AFTER,
    ) -> Reply:
        """Send text (and uploaded attachments, from `upload_attachment`).

        Offline, it is queued for up to `expire_after` seconds (0: refused at once).
        """
        target = self._sender.resolve(
            source_message_id, conversation_id, to, _checked_device(to_device_id)
        )
        secrets = [secret_descriptor(item) for item in attachments]
        return await self._sender.send(
            chat_payload(text, secrets),
            target,
            kind="chat.message" if secrets else "text",
            display_text=text,
            reply_to_message_id=reply_to_message_id or source_message_id,
            source_message_id=source_message_id,
            public_attachments=[public_descriptor(item) for item in attachments],
            expire_after=expire_after,
        )

    async def send_widget(
        self,
        payload: Mapping[str, Any],
        *,
        source_message_id: str | None = None,
        conversation_id: str | None = None,
        to: str | None = None,
        to_device_id: str | None = None,
        expire_after: float = DEFAULT_EXPIRE_AFTER,
    ) -> Reply:
        """Send a widget payload (validated by the caller) to the same target as a request."""
        target = self._sender.resolve(
            source_message_id, conversation_id, to, _checked_device(to_device_id)
        )
        text = json.dumps(dict(payload), separators=(",", ":"))
        return await self._sender.send(
            text,
            target,
            kind=str(payload.get("type", "widget")),
            display_text=text,
            source_message_id=source_message_id,
            expire_after=expire_after,
        )

    async def clear_queue(self) -> int:
        """Drop every send still queued (reported `cleared`); how many were dropped."""
        async with self._core.lock:
            return await self._sender.queue.clear()

    async def upload_attachment(
        self, content: bytes, *, name: str, mime: str, extra: Mapping[str, int] | None = None
    ) -> dict[str, Any]:
        return await self._sender.upload(content, name=name, mime=mime, extra=extra)

    async def download_attachment(self, attachment: Mapping[str, Any]) -> bytes:
        return await self._sender.download(attachment)

    async def mark_processed(self, message_id: str, note: str | None = None) -> Request:
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise SendError(SendRefusal.NOTE_TOO_LONG, f"over {MAX_NOTE_CHARS} characters")
        core = self._core
        async with core.lock:
            request = core.data.inbox.pending.get(message_id)
            if request is None:
                raise SendError(SendRefusal.UNKNOWN_REQUEST, message_id)
            data = core.data
            await core.commit(
                replace(
                    data,
                    inbox=data.inbox.processed(message_id),
                    history=data.history.with_processed(message_id, core.now(), note),
                )
            )
        core.hooks.status_changed()
        return request

    async def save_checkpoint(
        self,
        source_message_id: str,
        summary: str,
        next_action: str,
        *,
        host_session_label: str | None = None,
        status: str = "active",
    ) -> Checkpoint:
        check_fields(summary, next_action, host_session_label, status)
        request = self._sender.find_request(source_message_id)
        checkpoint = Checkpoint(
            source_message_id,
            request.conversation_id if request else None,
            summary,
            next_action,
            host_session_label,
            status,
            time.time(),
        )
        core = self._core
        async with core.lock:
            data = core.data
            await core.commit(
                replace(data, checkpoints=data.checkpoints.with_checkpoint(checkpoint))
            )
        return checkpoint

    # Connection loop

    async def _run(self) -> None:
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
                await self._inbox.queue.put(frame)
            elif isinstance(frame, RefusedMessage):
                await self._refuse(frame)
            elif isinstance(frame, IdentityChanged):
                _LOGGER.warning("The identity key of %s changed", frame.peer_id)
                self._core.hooks.identity_changed(frame.peer_id)
            elif isinstance(frame, RelayError) and frame.message_id is not None:
                await self._sender.relay_refused(frame.message_id, frame.error)

    async def _refuse(self, message: RefusedMessage) -> None:
        """Count and log a message refused for good, and acknowledge it (relay/refusals.py)."""
        self.refusals.record(message)
        with contextlib.suppress(PacerelleError):  # not connected: acknowledged when it comes again
            await self._core.write(build_ack(message))


def _checked_device(to_device_id: str | None) -> str | None:
    """A device id given by the caller, canonical as the relay's (server_answers.device_id)."""
    if to_device_id is None:
        return None
    try:
        return device_id(to_device_id, "to_device_id")
    except PacerelleResponseError:
        raise SendError(SendRefusal.INVALID_DEVICE_ID, repr(to_device_id)[:40]) from None


def _last_request_at(data: AgentData) -> float | None:
    """When the newest accepted request arrived (wall clock), from the saved history."""
    requests = data.history.requests
    return requests[-1].request.received_at if requests else None
