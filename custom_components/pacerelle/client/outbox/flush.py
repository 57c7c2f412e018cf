"""Writing, expiring and recovering the queued sends (values/send_queue.py), under the agent's lock.

Statuses reported per message id through `AgentHooks.send_status` (and kept in history):
`queued`, `sent` (written on an open connection), `uncertain` (outbox.py's rule, or found
mid-write after a restart), `expired` (dropped unsent at its expiry), `failed` (the relay
refused it) and `cleared` (dropped by the user).
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import replace

from ..agent_core import AgentCore
from ..device_ids import is_device_id
from ..errors import PacerelleError
from ..signal.session import PeerAddress
from ..trust.door import recheck
from ..values.agent_data import AgentData, UncertainSend
from ..values.history import FAILED, SENT, UNCERTAIN
from ..values.requests import Request
from ..values.send_queue import QueuedSend
from .confirmations import Outbox, Written

_LOGGER = logging.getLogger(__name__)

QUEUED = "queued"
EXPIRED = "expired"
CLEARED = "cleared"


def with_status(data: AgentData, ids: set[str], status: str) -> AgentData:
    return replace(data, history=data.history.with_reply_status(ids, status))


class QueuedSends:
    """The queue's moves; every method but `run_expiry` expects `core.lock` held."""

    def __init__(self, core: AgentCore, outbox: Outbox) -> None:
        self._core = core
        self._outbox = outbox
        self._changed = asyncio.Event()

    def report(self, sends: list[QueuedSend], status: str) -> None:
        for send in sends:
            self._core.hooks.send_status(send.message_id, send.conversation_id, status)
        if sends:
            self._core.hooks.status_changed()

    def changed(self) -> None:
        """Wake the expiry timer (a send was queued)."""
        self._changed.set()

    async def recover(self) -> None:
        """After a restart: sends caught mid-write become uncertain, never written again."""
        data = self._core.data
        caught = data.queued.attempted()
        if not caught:
            return
        ids = {send.message_id for send in caught}
        _LOGGER.warning("%d queued message(s) were being written at a crash", len(caught))
        data = data.with_uncertain(
            [UncertainSend(s.message_id, s.conversation_id, s.queued_at) for s in caught]
        )
        await self._core.commit(
            with_status(replace(data, queued=data.queued.without(ids)), ids, UNCERTAIN)
        )
        self.report(caught, UNCERTAIN)

    async def expire(self) -> None:
        data = self._core.data
        expired = data.queued.expired(self._core.now())
        if not expired:
            return
        ids = {send.message_id for send in expired}
        _LOGGER.info("%d queued message(s) expired unsent", len(expired))
        await self._core.commit(
            with_status(replace(data, queued=data.queued.without(ids)), ids, EXPIRED)
        )
        self.report(expired, EXPIRED)

    async def clear(self) -> int:
        data = self._core.data
        dropped = [s for s in data.queued.sends if not s.attempted]
        ids = {send.message_id for send in dropped}
        await self._core.commit(
            with_status(replace(data, queued=data.queued.without(ids)), ids, CLEARED)
        )
        self.report(dropped, CLEARED)
        return len(dropped)

    async def flush(self) -> None:
        """Write every queued send, in order, if connected; what is not written stays.

        Each is decided again first (trust_door.recheck): one whose key is no longer
        allowed (its device blocked meanwhile...) is dropped and reported `failed`."""
        core = self._core
        await self.expire()
        connection = core.connection
        if connection is None or connection.closed:
            return
        await self._refuse_disallowed()
        batch = [s for s in core.data.queued.sends if not s.attempted]
        if not batch:
            return
        ids = [send.message_id for send in batch]
        await core.commit(replace(core.data, queued=core.data.queued.marked(ids, attempted=True)))
        written: list[QueuedSend] = []
        try:
            for send in batch:
                serial = await core.write(send.frame)
                written.append(send)
                self._outbox.written(
                    Written(send.message_id, send.conversation_id, serial, core.now())
                )
        except PacerelleError as err:
            # The connection went away: the rest waits for the next one.
            _LOGGER.info("Queue flush stopped after %d of %d: %s", len(written), len(batch), err)
        finally:
            done = {send.message_id for send in written}
            rest = ids[len(written) :]
            data = core.data
            queued = data.queued.without(done).marked(rest, attempted=False)
            await core.commit(with_status(replace(data, queued=queued), done, SENT))
        self.report(written, SENT)

    async def _refuse_disallowed(self) -> None:
        core = self._core
        data = core.data
        refused: list[QueuedSend] = []
        for send in data.queued.sends:
            if send.attempted:
                continue
            rule = core.trust.seal_rule(_request(data, send.answers))
            reason = recheck(rule, send, data.conversations, _session_key(data, send))
            if reason is not None:
                _LOGGER.warning("Queued message %s not sent: %s", send.message_id, reason)
                refused.append(send)
        if not refused:
            return
        ids = {send.message_id for send in refused}
        await core.commit(with_status(replace(data, queued=data.queued.without(ids)), ids, FAILED))
        self.report(refused, FAILED)

    async def run_expiry(self) -> None:
        """Drop each queued send at its expiry, even while offline (reported at once)."""
        core = self._core
        while True:
            due = core.data.queued.next_expiry()
            timeout = None if due is None else max(due - core.now(), 0.0)
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout)
                continue
            try:
                async with core.lock:
                    await self.expire()
            except (PacerelleError, OSError) as err:
                _LOGGER.warning("Could not drop expired queued messages: %s", err)
                await asyncio.sleep(1.0)


def _request(data: AgentData, message_id: str | None) -> Request | None:
    """The request a queued answer answers, wherever it is still kept."""
    if message_id is None:
        return None
    found = data.inbox.pending.get(message_id)
    if found is None and message_id in data.inbox.received:
        found = data.inbox.received[message_id][1]
    for item in reversed(data.history.requests):
        if found is None and item.request.message_id == message_id:
            found = item.request
    return found


def _session_key(data: AgentData, send: QueuedSend) -> Callable[[str, str], bytes | None]:
    def key(person_id: str, device_id: str) -> bytes | None:
        if not is_device_id(device_id):
            return None
        peer = PeerAddress(person_id, send.conversation_id, int(device_id))
        record = data.signal.record(peer)
        return record.trusted_identity if record.current is not None else None

    return key
