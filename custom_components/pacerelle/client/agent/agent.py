"""The HA-free agent: the facade the integration builds on, delegating to its parts.

The connection loop (states, backoff, token renewal) is agent/connection.py; the inbox,
the outbox and prekey publication are inbox/, outbox/ and agent/prekeys.py; what a host
reads of the agent (status, requests, history, diagnostics' summary) is agent/views.py.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import aiohttp

from ..agent_core import AgentConfig, AgentCore, AgentHooks, ConnectionState, Storage
from ..attachments import (
    Files,
    OutgoingFile,
    hooks_for_host,
    public_descriptor,
    secret_descriptor,
)
from ..conversations.membership import GroupMemberships, relay_answers
from ..conversations.seen import named_recipients
from ..errors import SendError, SendRefusal
from ..inbox import handling
from ..inbox.pipeline import InboxPipeline
from ..inbox.queue import InboundQueue
from ..limits import DEFAULT_EXPIRE_AFTER
from ..outbox.sender import Sender, checked_device
from ..relay.api import AgentApi
from ..relay.refusals import GatewayRefusals
from ..relay.tokens import RuntimeTokens
from ..signal.errors import SignalErrorKind
from ..trust.door import TrustDoor
from ..values.agent_data import AgentData
from ..values.checkpoints import Checkpoint
from ..values.decrypt_failures import DecryptionOutcome
from ..values.history import Reply
from ..values.payloads import chat_payload
from ..values.requests import Request
from ..values.trust_book import TrustBook
from .connection import ConnectionLoop
from .prekeys import PrekeyPublisher
from .views import AgentReads

_LOGGER = logging.getLogger(__name__)


class Agent(AgentReads):
    """The agent a host runs: its lifecycle and actions here, its reads in agent/views.py."""

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
        at_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`trust`: the door with the stored trust book (none: one on `data`'s book);
        `store`: the agent's own store, loaded (state/agent_store.py), which it commits to;
        `at_close`: what `close` does once the agent stopped (agent/opening.py)."""
        self._at_close = at_close
        self._tokens = tokens
        self._rekeyed = False  # prekeys re-keyed once per run at most (agent/restore.py)
        self._memberships = GroupMemberships()
        # The host is given requests without attachment keys (attachments.py).
        host = hooks_for_host(hooks)
        hooks = replace(
            host,
            decryption=self._watching_prekeys(host.decryption),
            deliver=self._hearing_groups(host.deliver, host.status_changed),
        )
        book = data.trust if isinstance(data.trust, TrustBook) else None
        door = trust if trust is not None else TrustDoor(config.owner_id, book)
        self._core = AgentCore(config, hooks, data, extra, door, store=store)
        self._api = AgentApi(session, config.server_url, tokens)
        # The host prepares a request's files with `download`, looked up at each call.
        self._inbox = InboxPipeline(self._core, self._api, lambda m, i: self.download(m, i))
        self._prekeys = PrekeyPublisher(self._core, self._api)
        self._sender = Sender(self._core, self._api)
        self._files = Files(self._core, self._api)
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()
        self.refusals = GatewayRefusals()  # messages refused for good on arrival
        self._connection = ConnectionLoop(
            self._core,
            session,
            tokens,
            self._prekeys,
            self._sender,
            self._inbox.queue,
            self.refusals,
            self._stopping,
        )

    # Lifecycle

    def start(self) -> None:
        if self._tasks:
            return
        self._stopping.clear()
        # From now on a send made offline is queued (the connection loop is about to run).
        self._core.set_state(ConnectionState.CONNECTING)
        self._tasks = [
            asyncio.create_task(self._connection.run(), name="pacerelle-agent"),
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

    async def close(self) -> None:
        """Stop, then let go of the store (its generation advanced: agent/generation.py)."""
        await self.stop()
        if self._at_close is not None:
            at_close, self._at_close = self._at_close, None
            await at_close()

    def _watching_prekeys(
        self, report: Callable[[DecryptionOutcome], None]
    ) -> Callable[[DecryptionOutcome], None]:
        """The host's decryption hook, re-keying prekeys on the first `unknown_prekey`."""

        def decryption(outcome: DecryptionOutcome) -> None:
            report(outcome)
            if outcome.reason == SignalErrorKind.UNKNOWN_PREKEY.value and not self._rekeyed:
                self._rekeyed = True
                rekey = self._prekeys.rekey_after_restore()
                self._tasks.append(asyncio.create_task(rekey, name="pacerelle-rekey"))

        return decryption

    def _hearing_groups(
        self, deliver: Callable[[Request], None], status_changed: Callable[[], None]
    ) -> Callable[[Request], None]:
        """The host's deliver hook; a group message delivered joins its group again
        (conversations/membership.py), before the host sees it."""

        def delivered(request: Request) -> None:
            joined = request.is_group and self._memberships.heard(request.conversation_id)
            deliver(request)
            if joined:
                status_changed()

        return delivered

    # Status and queries (the rest: agent/views.py)

    @property
    def inbound(self) -> InboundQueue:
        """The bounded queue of incoming messages (its size and high-water marks)."""
        return self._inbox.queue

    @property
    def trust(self) -> TrustDoor:
        """The one door for trust (trust/door.py)."""
        return self._core.trust

    # Actions

    async def check_groups(self, conversation_ids: Sequence[str]) -> None:
        """Ask the relay whether the agent is still in each group (conversations/
        membership.py); the host's status hook is called if any changed."""
        answers = await relay_answers(self._api, conversation_ids)
        changed = [self._memberships.record(cid, member) for cid, member in answers.items()]
        if any(changed):
            self._core.hooks.status_changed()

    async def send_text(
        self,
        text: str,
        *,
        source_message_id: str | None = None,
        conversation_id: str | None = None,
        to: str | None = None,
        to_device_id: str | None = None,
        reply_to_message_id: str | None = None,
        files: Sequence[OutgoingFile] = (),
        expire_after: float = DEFAULT_EXPIRE_AFTER,
    ) -> Reply:
        """Send text and `files` (each sealed and uploaded here first: attachments.py).

        Offline, it is queued for up to `expire_after` seconds (0: refused at once); an
        upload needs the relay, so a send with files is refused while offline.
        """
        target = self._sender.resolve(
            source_message_id, conversation_id, to, checked_device(to_device_id)
        )
        attachments = await self._files.upload_all(files)
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
            source_message_id, conversation_id, to, checked_device(to_device_id)
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

    async def name_conversations(
        self, conversation_ids: Collection[str], known: Mapping[str, str] | None = None
    ) -> None:
        """The conversations the host names from now on: the store keeps each one's
        recipient while it is named (`known`: one the host kept from before, checked) and
        forgets those no longer named (conversations/seen.py `named_recipients`); nothing
        is written when nothing changed."""
        async with self._core.lock:
            data = self._core.data
            named = named_recipients(data, self._core.config, conversation_ids, known or {})
            if named != dict(data.conversations.named):
                conversations = replace(data.conversations, named=named)
                await self._core.commit(replace(data, conversations=conversations))

    async def clear_queue(self) -> int:
        """Drop every send still queued (reported `cleared`); how many were dropped."""
        async with self._core.lock:
            return await self._sender.queue.clear()

    async def download(self, message_id: str, index: int) -> bytes:
        """The bytes of the `index`-th (from 0) file of a request, checked and decrypted."""
        request = self._sender.find_request(message_id)
        if request is None:
            raise SendError(SendRefusal.UNKNOWN_REQUEST, message_id)
        if not 0 <= index < len(request.attachments):
            raise SendError(SendRefusal.BAD_ATTACHMENT, f"no file {index + 1}")
        return await self._files.download(request.attachments[index])

    async def mark_processed(self, message_id: str, note: str | None = None) -> Request:
        request = await handling.mark_processed(self._core, message_id, note)
        return request.for_host()

    async def save_checkpoint(
        self,
        source_message_id: str,
        summary: str,
        next_action: str,
        *,
        host_session_label: str | None = None,
        status: str = "active",
    ) -> Checkpoint:
        request = self._sender.find_request(source_message_id)
        return await handling.save_checkpoint(
            self._core, source_message_id, request, summary, next_action, host_session_label, status
        )
