"""The inbox pipeline: decrypt, persist, hand over, acknowledge; nothing lost or doubled.

Per batch: 1. classify by receipt (inbox.py) and hand-over mark (handed_over.py); 2. decrypt
the new ones in the executor, group keys fetched first without the lock (group_key_fetch.py);
3. save Signal state and decrypted requests in one write, then report decryption outcomes;
4. let the host prepare files (delivery.py) without the lock (skipped when none); 5. per
request, keep its mark (Storage.mark, a journal) and fire its event with nothing in between,
then save acceptance with the marks in one commit and send ACK_READ. Steps 1-3 and 5 hold the
agent's lock; only this task hands requests over, so releasing it around 4 is safe.
Nothing slower than the mark may stand between it and the event: a kill there loses the
event. After a kill a request is either marked (no second event) or handed over from its
stored copy; across a power cut before 5's commit, events fire again (at least once). Marks
live outside the restorable folder (state/agent_store.py), so a restore never re-hands one.
"""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from ..agent_core import AgentCore, Download
from ..conversations.group_key_fetch import fetch_envelopes, still_wanted, wanted_groups
from ..crypto_jobs import Opened, open_batch, peer_of
from ..errors import PacerelleError
from ..limits import MAX_BATCH, MAX_DEFERRED, MAX_DEFERRED_BYTES
from ..relay.api import AgentApi
from ..relay.frames import InboundMessage, build_ack
from ..signal.identity import verification_code
from ..signal.state import AgentSignalState
from ..values.agent_data import AgentData
from ..values.decrypt_failures import DecryptionOutcome, DeviceKey
from ..values.groups import parse_message
from ..values.handed_over import handed_over_before
from ..values.requests import Receipt, Request, group_seal
from .checks import checked
from .delivery import accepted, hand_over, marked, prepare, with_files
from .queue import InboundQueue
from .stage_clock import StageClock

_LOGGER = logging.getLogger(__name__)

# Group messages kept in memory while their key has not come (see _retry_deferred).


class InboxPipeline:
    def __init__(self, core: AgentCore, api: AgentApi, download: Download) -> None:
        self._core = core
        self._api = api
        self._download = download  # given to the host's `prepare` (delivery.py)
        self.queue = InboundQueue()
        self._deferred: dict[str, InboundMessage] = {}
        self.prekeys_used = asyncio.Event()

    async def run(self) -> None:
        """Process queued messages in batches until cancelled."""
        while True:
            batch = await self.queue.get_batch(MAX_BATCH)
            try:
                await self.process(batch)
            except asyncio.CancelledError:
                raise
            except Exception:
                # Nothing unsaved was acknowledged: the relay redelivers these messages at
                # the next connection, and what was stored is handed over from the store.
                _LOGGER.exception("Incoming messages left for redelivery")

    async def process(self, batch: Sequence[InboundMessage]) -> None:
        """Process `batch`, behind the deferred group messages it may open."""
        await self._process(self._with_deferred(batch))

    async def _process(self, batch: Sequence[InboundMessage]) -> None:
        core = self._core
        clock = StageClock()
        # Without the lock (group_key_fetch.py): a send never waits for the relay's answer.
        wanted = wanted_groups(core.data, batch)
        fetched = await fetch_envelopes(self._api, wanted) if wanted else {}
        if wanted:
            clock.lap("group keys")
        async with core.lock:
            clock.lap("lock")
            to_ack, to_open, stored, finished = self._classify(batch)
            envelopes = still_wanted(fetched, core.data, to_open)
            data = core.data
            signal_before = data.signal
            prekeys_before = len(data.signal.prekeys.one_time_prekeys)
            opened: list[Opened] = []
            now = core.now()
            if to_open:
                data, opened = await core.hooks.run_blocking(
                    lambda: open_batch(
                        core.data,
                        to_open,
                        require_encryption=core.config.encrypted,
                        now=now,
                        envelopes=envelopes,
                    )
                )
                clock.lap("decrypt")
            data = self._received(data, opened, now, stored, to_ack)
            if finished:
                # Handed over before a kill, the acceptance not saved: saved now, no event.
                data = accepted(data, marked(finished))
                to_ack.extend(message for message, _ in finished)
            requests = [request for _, request in stored]
            if data is not core.data:
                await core.commit(data)
                clock.lap("save")
                clock.add("build", core.last_commit.build)
            self._tell(opened, signal_before, now)
            # Nothing to prepare: handed over under this hold of the lock (module docstring).
            at_once = bool(requests) and not with_files(requests)
            if at_once:
                await hand_over(core, stored)
                clock.lap("events")
            if len(core.data.signal.prekeys.one_time_prekeys) < prekeys_before:
                self.prekeys_used.set()
        if requests and not at_once:
            await prepare(core, requests, self._download)  # without the lock
            clock.lap("prepare")
            async with core.lock:
                await self._commit_accepted(stored)
            clock.lap("accept")
            clock.add("build", core.last_commit.build)
        to_ack.extend(message for message, _ in stored)
        await self._acknowledge(to_ack)
        clock.lap("ack")
        _LOGGER.debug("Stage times (ms) of a batch of %d: %s", len(batch), clock)
        await self._retry_deferred(opened)

    def _received(
        self,
        data: AgentData,
        opened: Sequence[Opened],
        now: float,
        stored: list[tuple[InboundMessage, Request]],
        to_ack: list[InboundMessage],
    ) -> AgentData:
        """`data` with the requests opened and judged received (added to `stored`) and the
        refused rejected (added to `to_ack`)."""
        core = self._core
        inbox = data.inbox
        for item in checked(
            inbox,
            core.trust,
            opened,
            now,
            conversations=data.conversations,
            agent_id=core.config.agent_id,
        ):
            if item.request is not None:
                inbox = inbox.with_received(
                    item.message.digest, item.request, group_seal(item.message)
                )
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
        return data if inbox is data.inbox else replace(data, inbox=inbox)

    def _with_deferred(self, batch: Sequence[InboundMessage]) -> list[InboundMessage]:
        """`batch` behind the deferred group messages it may open: those of a group it
        brings a message of (its key fetch may bring theirs) and those whose key is held.

        They were written before anything in `batch`, so they go first: events keep the
        order people wrote in, whatever the timing of the key's arrival. A deferred message
        the relay redelivers in `batch` is taken from there (one copy, never acknowledged
        while still waiting for its key)."""
        if not self._deferred:
            return list(batch)
        arriving = {message.message_id for message in batch}
        groups = {message.conversation_id for message in batch if message.is_group}
        held = self._core.data.conversations.group_keys
        earlier = [
            message
            for message in self._deferred.values()
            if message.message_id not in arriving
            and (message.conversation_id in groups or _key_name(message) in held)
        ]
        for message in earlier:
            del self._deferred[message.message_id]
        for message_id in arriving & self._deferred.keys():
            del self._deferred[message_id]
        return [*earlier, *batch]

    async def _retry_deferred(self, opened: Sequence[Opened]) -> None:
        """Keep the group messages that came before their key (unacknowledged: the relay
        would redeliver them only at the next connection), and open those whose key the
        agent holds now (learned with a later message, or before a group send: then at the
        next incoming batch). At most
        MAX_DEFERRED (and MAX_DEFERRED_BYTES of payload) are kept; an older one waits for
        that redelivery."""
        for item in opened:
            if item.deferred:
                self._deferred[item.message.message_id] = item.message
        while len(self._deferred) > MAX_DEFERRED or (
            sum(len(m.payload) for m in self._deferred.values()) > MAX_DEFERRED_BYTES
        ):
            del self._deferred[next(iter(self._deferred))]
        conversations = self._core.data.conversations
        ready = [m for m in self._deferred.values() if conversations.opens_with(_key_name(m) or "")]
        for message in ready:
            del self._deferred[message.message_id]
        if ready:
            _LOGGER.debug("Opening %d group messages whose key came after them", len(ready))
            await self.process(ready)

    def _tell(self, opened: Sequence[Opened], signal_before: AgentSignalState, now: float) -> None:
        """Decryption outcomes, once saved and before any hand-over."""
        hooks = self._core.hooks
        for item in opened:
            outcome = _decryption_outcome(item, signal_before, now)
            if outcome is not None:
                hooks.decryption(outcome)

    def _classify(
        self, batch: Sequence[InboundMessage]
    ) -> tuple[
        list[InboundMessage],
        list[InboundMessage],
        list[tuple[InboundMessage, Request]],
        list[tuple[InboundMessage, Request]],
    ]:
        """(to acknowledge, to open, stored to hand over, stored and handed over before)."""
        inbox, marks = self._core.data.inbox, self._core.data.handed_over
        to_ack: list[InboundMessage] = []
        to_open: list[InboundMessage] = []
        stored: list[tuple[InboundMessage, Request]] = []
        finished: list[tuple[InboundMessage, Request]] = []
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
                pair = (message, inbox.received[message.message_id][1])
                if handed_over_before(marks, message):
                    _LOGGER.debug("Message %s was handed over before a stop", message.message_id)
                    finished.append(pair)
                else:
                    stored.append(pair)
            elif receipt is Receipt.CONFLICT:
                _conflict(message)
            elif handed_over_before(marks, message):
                _replayed(message)
                to_ack.append(message)
            else:
                to_open.append(message)
        return to_ack, to_open, stored, finished

    async def _commit_accepted(self, stored: Sequence[tuple[InboundMessage, Request]]) -> None:
        """Hand over in arrival order, then save as accepted (before any ACK_READ goes out).

        Call with the lock held.
        """
        core = self._core
        data = core.data
        # Still received (nothing else hands over, but the lock was released meanwhile).
        stored = [pair for pair in stored if pair[1].message_id in data.inbox.received]
        await hand_over(core, stored)

    async def _acknowledge(self, messages: Sequence[InboundMessage]) -> None:
        for message in messages:
            try:
                await self._core.write(build_ack(message))
            except PacerelleError:
                return  # not connected: the relay redelivers, and we acknowledge then


def _key_name(message: InboundMessage) -> str | None:
    try:
        return parse_message(message.payload).key_name
    except PacerelleError:
        return None


def _replayed(message: InboundMessage) -> None:
    _LOGGER.warning(
        "Message %s from %s was already handed over (the agent's state is older than what "
        "it handed over: restored from a copy?); acknowledged, not handed over again",
        message.message_id,
        message.sender_id,
    )


def _conflict(message: InboundMessage) -> None:
    _LOGGER.error(
        "Message %s from %s reuses a known id with different content; not handed over",
        message.message_id,
        message.sender_id,
    )


def _decryption_outcome(
    item: Opened, signal_before: AgentSignalState, now: float
) -> DecryptionOutcome | None:
    """The fate of a direct encrypted message's decryption; None for anything else."""
    message = item.message
    if not message.encrypted or message.is_group:
        return None
    if item.request is None and item.signal_failure is None:
        return None  # refused for another reason than its decryption (size, content)
    device = DeviceKey(message.sender_id, message.conversation_id, message.sender_device_id)
    if item.signal_failure is None:
        return DecryptionOutcome(device, now, new_session=item.new_session)
    try:
        peer = peer_of(message.sender_id, message.conversation_id, message.sender_device_id)
    except ValueError:
        return DecryptionOutcome(device, now, reason=item.signal_failure)
    record = signal_before.record(peer)
    identity = record.trusted_identity
    return DecryptionOutcome(
        device,
        now,
        reason=item.signal_failure,
        had_session=record.current is not None,
        device_code=verification_code(identity) if identity is not None else None,
    )
