"""The inbox pipeline: decrypt, persist, hand over, acknowledge; nothing lost or doubled.

For a batch of incoming messages, in order:
1. classify each by its receipt (inbox.py): acknowledged again, handed over from the stored
   copy, refused as a conflict, or new;
2. decrypt the new ones in the executor (one job for the batch);
3. save the Signal state and the decrypted requests together (one atomic write);
4. let the host prepare each request (save its files);
5. save them as accepted, hand them over (the `pacerelle_message` event) with nothing
   awaited in between, then send ACK_READ for each.
A crash before 3 replays the messages on the old state; between 3 and 5 the stored copies
are handed over again, never decrypted twice; after 5 a redelivery is only acknowledged.
Events fire only once their acceptance is on disk: a kill during that write can at worst
replay the batch's hand-over from the stored copies (before any event of it fired), and the
gap between the write's end and the events is one pass of the event loop.
"""

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .agent_core import AgentCore
from .api import AgentApi
from .crypto_jobs import Opened, open_batch
from .errors import PacerelleError
from .gateway_frames import InboundMessage, build_ack
from .groups import parse_message
from .inbox import Receipt, Request

_LOGGER = logging.getLogger(__name__)

MAX_BATCH = 50


class InboxPipeline:
    def __init__(self, core: AgentCore, api: AgentApi) -> None:
        self._core = core
        self._api = api
        self.queue: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self.prekeys_used = asyncio.Event()

    async def run(self) -> None:
        """Process queued messages in batches until cancelled."""
        while True:
            batch = [await self.queue.get()]
            while len(batch) < MAX_BATCH and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            try:
                await self.process(batch)
            except asyncio.CancelledError:
                raise
            except Exception:
                # Nothing unsaved was acknowledged: the relay redelivers these messages at
                # the next connection, and what was stored is handed over from the store.
                _LOGGER.exception("Incoming messages left for redelivery")

    async def process(self, batch: Sequence[InboundMessage]) -> None:
        core = self._core
        async with core.lock:
            to_ack, to_open, stored = self._classify(batch)
            envelopes = await self._group_envelopes(to_open)
            data = core.data
            prekeys_before = len(data.signal.prekeys.one_time_prekeys)
            opened: list[Opened] = []
            if to_open:
                now = core.now()
                data, opened = await core.hooks.run_blocking(
                    lambda: open_batch(
                        core.data,
                        to_open,
                        require_encryption=core.config.encrypted,
                        now=now,
                        envelopes=envelopes,
                    )
                )
            inbox = data.inbox
            for item in opened:
                if item.request is not None:
                    inbox = inbox.with_received(item.message.digest, item.request)
                    stored.append((item.message, item.request))
                elif item.refusal is not None:
                    _LOGGER.warning(
                        "Refusing message %s from %s: %s",
                        item.message.message_id,
                        item.message.sender_id,
                        item.refusal,
                    )
                    inbox = inbox.reject(item.message.message_id, item.message.digest)
                    to_ack.append(item.message)
            if data is not core.data or inbox is not data.inbox:
                await core.commit(replace(data, inbox=inbox))
            for item in opened:
                if item.identity_changed:  # told before the message itself is handed over
                    core.hooks.identity_changed(item.message.sender_id)
            await self._hand_over(stored)
            to_ack.extend(message for message, _ in stored)
            if len(core.data.signal.prekeys.one_time_prekeys) < prekeys_before:
                self.prekeys_used.set()
        await self._acknowledge(to_ack)

    def _classify(
        self, batch: Sequence[InboundMessage]
    ) -> tuple[list[InboundMessage], list[InboundMessage], list[tuple[InboundMessage, Request]]]:
        inbox = self._core.data.inbox
        to_ack: list[InboundMessage] = []
        to_open: list[InboundMessage] = []
        stored: list[tuple[InboundMessage, Request]] = []
        seen: dict[str, str] = {}
        for message in batch:
            if message.message_id in seen:
                # The same message twice in one batch (old and new connection): one pass.
                if seen[message.message_id] == message.digest:
                    to_ack.append(message)
                else:
                    _conflict(message)
                continue
            seen[message.message_id] = message.digest
            receipt = inbox.receipt(message.message_id, message.digest)
            if receipt in (Receipt.ACCEPTED, Receipt.REJECTED):
                to_ack.append(message)
            elif receipt is Receipt.RECEIVED:
                stored.append((message, inbox.received[message.message_id][1]))
            elif receipt is Receipt.CONFLICT:
                _conflict(message)
            else:
                to_open.append(message)
        return to_ack, to_open, stored

    async def _group_envelopes(
        self, messages: Sequence[InboundMessage]
    ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """Fetch group key envelopes for group messages whose key we lack."""
        held = self._core.data.conversations.group_keys
        wanted: set[str] = set()
        for message in messages:
            if not (message.encrypted and message.is_group):
                continue
            try:
                if parse_message(message.payload).key_name not in held:
                    wanted.add(message.conversation_id)
            except PacerelleError:
                continue  # refused when opened
        envelopes: dict[str, Sequence[Mapping[str, Any]]] = {}
        for conversation_id in wanted:
            try:
                envelopes[conversation_id] = await self._api.group_keys(conversation_id)
            except PacerelleError as err:
                _LOGGER.warning("Could not fetch group keys: %s", err)
        return envelopes

    async def _hand_over(self, stored: list[tuple[InboundMessage, Request]]) -> None:
        """Prepare, save as accepted, then deliver (before any ACK_READ goes out)."""
        if not stored:
            return
        core = self._core
        data = core.data
        history = data.history
        for _message, request in stored:
            pending = core.hooks.prepare(request)
            if pending is not None:
                await pending
            history = history.with_request(request)
        inbox = data.inbox.accept(request.message_id for _, request in stored)
        await core.commit(replace(data, inbox=inbox, history=history))
        for _message, request in stored:  # no await from the write to the last event
            core.hooks.deliver(request)
        core.hooks.status_changed()

    async def _acknowledge(self, messages: Sequence[InboundMessage]) -> None:
        for message in messages:
            try:
                await self._core.write(build_ack(message))
            except PacerelleError:
                return  # not connected: the relay redelivers, and we acknowledge then


def _conflict(message: InboundMessage) -> None:
    _LOGGER.error(
        "Message %s from %s reuses a known id with different content; not handed over",
        message.message_id,
        message.sender_id,
    )
