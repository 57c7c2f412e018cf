"""`wait_for_messages`: pending requests now, or the first ones to arrive within a timeout.

Waiting never marks a request processed (only `mark_processed` does): a model that stops
half way finds the same requests again at its next call without a cursor.
"""

import asyncio
import contextlib
import time
from typing import Any, Final

import probatio
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..client import Request
from ..const import DOMAIN
from ..limits import MAX_WAIT_REQUESTS, MAX_WAIT_TIMEOUT_MS
from ..signals import status_signal
from .cursor import Cursor, CursorError, after, in_order
from .tools import AgentRef, PacerelleTool, request_view, tool_schema

DEFAULT_TIMEOUT_MS: Final = 25_000
# The MCP server gives the range but no default; 20 keeps one answer readable for a model.
DEFAULT_LIMIT: Final = 20


class WaitForMessagesTool(PacerelleTool):
    name = "wait_for_messages"
    title = "Wait for Pacerelle messages"
    description = (
        "Returns pending Pacerelle requests, or waits up to timeoutMs for new ones. Returns "
        "messages, cursor, has_more and connection. Waiting never marks a request as "
        "processed: answer it, then call mark_processed."
    )
    parameters = tool_schema(
        {
            probatio.Optional(
                "timeoutMs",
                default=DEFAULT_TIMEOUT_MS,
                description="How long to wait in milliseconds, 0-30000. Default 25000.",
            ): probatio.All(probatio.Coerce(int), probatio.Range(min=0, max=MAX_WAIT_TIMEOUT_MS)),
            probatio.Optional(
                "conversationId", description="Only return requests from this conversation."
            ): probatio.All(str, probatio.Length(min=1)),
            probatio.Optional(
                "limit",
                default=DEFAULT_LIMIT,
                description="Maximum requests to return, 1-50. Default 20.",
            ): probatio.All(probatio.Coerce(int), probatio.Range(min=1, max=MAX_WAIT_REQUESTS)),
            probatio.Optional(
                "afterCursor",
                description=(
                    "Pagination cursor from a previous call. Omit it when resuming: a cursor "
                    "skips earlier requests, including unfinished ones."
                ),
            ): str,
        }
    )
    annotations = llm.ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=True
    )

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        cursor = _cursor(args.get("afterCursor"))
        conversation_id: str | None = args.get("conversationId")
        if conversation_id is not None:
            ref.scope.check_conversation(conversation_id)
        limit: int = args["limit"]
        deadline = time.monotonic() + args["timeoutMs"] / 1000
        changed = asyncio.Event()

        @callback
        def wake() -> None:
            changed.set()

        unsubscribe = async_dispatcher_connect(hass, status_signal(ref.runtime.entry_id), wake)
        try:
            while True:
                changed.clear()
                found = _unread(ref, conversation_id, cursor)
                remaining = deadline - time.monotonic()
                if found or remaining <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), remaining)
        finally:
            unsubscribe()
        returned = found[:limit]
        next_cursor = Cursor.of(returned[-1]).encode() if returned else args.get("afterCursor")
        return {
            "messages": [request_view(ref, request) for request in returned],
            "cursor": next_cursor,
            "has_more": len(found) > len(returned),
            "connection": ref.runtime.status.state.value,
        }


def _cursor(text: str | None) -> Cursor | None:
    if text is None:
        return None
    try:
        return Cursor.decode(text)
    except CursorError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN, translation_key="llm_invalid_cursor"
        ) from err


def _unread(ref: AgentRef, conversation_id: str | None, cursor: Cursor | None) -> list[Request]:
    agent = ref.runtime.agent
    ranks = agent.arrival_ranks()
    pending = [
        request for request in agent.pending_requests(conversation_id) if ref.listed(request)
    ]
    return after(in_order(pending, ranks), cursor, ranks)
