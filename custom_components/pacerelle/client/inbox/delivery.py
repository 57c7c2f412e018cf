"""Steps 4 and 5 of the inbox pipeline (pipeline.py): prepare, then hand over and accept.

Only a request with files has anything to prepare (`with_files`: its files saved, its voice
note transcribed); the host's `prepare` is called for those only, without the agent's lock.
A batch without files is handed over under the hold of the lock that saved it as received.
A hand-over keeps each request's mark then fires its event, synchronously (nothing slower
than the mark may stand between them), and only then saves the requests as accepted with
their marks (one commit, before any ACK_READ).
"""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from ..agent_core import AgentCore, Download
from ..relay.frames import InboundMessage
from ..values.agent_data import AgentData
from ..values.handed_over import hand_over_mark
from ..values.requests import Request

_LOGGER = logging.getLogger(__name__)

type Stored = Sequence[tuple[InboundMessage, Request]]
"""Requests saved as received, with the messages that brought them, in arrival order."""

type Marked = Sequence[tuple[str, Request]]
"""Requests with their hand-over marks (handed_over.py), each computed once."""


def with_files(requests: Sequence[Request]) -> list[Request]:
    """The requests the host may have work for before their events: those with files."""
    return [request for request in requests if request.attachments]


async def prepare(core: AgentCore, requests: Sequence[Request], download: Download) -> None:
    """Let the host ready each request with files, concurrently, without the lock.

    The host bounds each preparation (events.py: a semaphore and a deadline per file);
    a preparation that fails is logged and its request still handed over.
    """
    pending = [
        awaitable
        for request in with_files(requests)
        if (awaitable := core.hooks.prepare(request, download)) is not None
    ]
    results = await asyncio.gather(*pending, return_exceptions=True)
    for result in results:
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            _LOGGER.error("Could not prepare an incoming request", exc_info=result)


def marked(stored: Stored) -> list[tuple[str, Request]]:
    return [(hand_over_mark(message), request) for message, request in stored]


def accepted(data: AgentData, marked: Marked) -> AgentData:
    """`data` with the received requests accepted (pending), in the history and marked as
    handed over (handed_over.py; the host keeps each mark as it is handed over)."""
    history = data.history
    for _, request in marked:
        history = history.with_request(request)
    inbox = data.inbox.accept(request.message_id for _, request in marked)
    marks = data.handed_over.with_marks(
        (mark for mark, _ in marked),
        trusted=(mark for mark, request in marked if request.judged.trusted),
    )
    return replace(data, inbox=inbox, history=history, handed_over=marks)


async def hand_over(core: AgentCore, stored: Stored) -> None:
    """Hand the requests over in arrival order, each its mark then its event, then save them
    as accepted and make all survive a power cut, before any ACK_READ. Call with the lock."""
    pairs = marked(stored)

    def hand_over_now() -> None:
        # Synchronous: nothing runs between a mark and its event.
        for mark, request in pairs:
            core.store.mark(mark, request.judged.trusted)
            core.hooks.deliver(request)
        # The status (pending count, last message: Home Assistant writes nine entity states,
        # a millisecond or two) is told at the loop's next pass, after what the events woke
        # up (their WebSocket subscribers' writes), not before.
        asyncio.get_running_loop().call_soon(core.hooks.status_changed)

    if stored:
        await core.commit_handed_over(accepted(core.data, pairs), hand_over_now)
