"""Reading tools: status, history, checkpoints, and the MCP server's two resources as tools.

Home Assistant's LLM APIs carry tools and a prompt, not resources (its MCP server only
publishes its own Assist snapshot), so `conversation://current` and `widget://pending`
are the read-only tools `get_current_conversation` and `get_pending_widget`.
"""

from typing import Any

import probatio
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from ..client import (
    BOUNDS,
)
from .tools import AgentRef, PacerelleTool, request_view, timestamp, tool_schema

READ_ONLY = llm.ToolAnnotations(
    read_only=True, destructive=False, idempotent=True, open_world=False
)
_CONVERSATION_FIELD = probatio.Optional("conversationId", description="Only this conversation.")


class GetStatusTool(PacerelleTool):
    name = "get_status"
    title = "Pacerelle status"
    description = (
        "Connection state (connecting, connected, reconnecting, disconnected or stopped), "
        "the number of pending requests, queued_sends: replies waiting for the connection, "
        "and uncertain_sends: replies whose delivery could not be confirmed."
    )
    parameters = tool_schema({})
    annotations = READ_ONLY

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        agent = ref.runtime.agent
        status = agent.status
        return {
            "agent": {"id": ref.agent_id, "name": ref.name},
            "connection": status.state.value,
            "pending": status.pending,
            "queued_sends": status.queued_sends,
            "uncertain_sends": [
                {
                    "message_id": send.message_id,
                    "conversation_id": send.conversation_id,
                    "at": timestamp(send.at),
                }
                for send in agent.uncertain_sends()
            ],
            "last_message_at": timestamp(status.last_message_at),
            "verification_code": status.verification_code,
        }


class GetHistoryTool(PacerelleTool):
    name = "get_history"
    title = "Pacerelle history"
    description = (
        "Recent requests and replies kept locally (up to 50 of each), newest last; each "
        "request says when it was marked processed and with which note."
    )
    parameters = tool_schema(
        {
            _CONVERSATION_FIELD: probatio.All(str, probatio.Length(min=1)),
            probatio.Optional(
                "limit",
                default=BOUNDS.history_entries,
                description="How many of each, 1-50. Default 50.",
            ): probatio.All(
                probatio.Coerce(int), probatio.Range(min=1, max=BOUNDS.history_entries)
            ),
        }
    )
    annotations = READ_ONLY

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        wanted: str | None = args.get("conversationId")
        if wanted is not None:
            ref.scope.check_conversation(wanted)
        limit: int = args["limit"]
        history = ref.runtime.agent.history(wanted, BOUNDS.history_entries)
        requests = [i for i in history.requests if ref.listed(i.request)]
        replies = [reply for reply in history.replies if ref.scope.covers(reply.conversation_id)]
        return {
            "requests": [
                {
                    **request_view(ref, item.request),
                    "processed_at": timestamp(item.processed_at),
                    "note": item.note,
                }
                for item in requests[-limit:]
            ],
            "replies": [
                {**reply.to_json(), "sent_at": timestamp(reply.sent_at)}
                for reply in replies[-limit:]
            ],
        }


class GetCheckpointsTool(PacerelleTool):
    name = "get_checkpoints"
    title = "Pacerelle checkpoints"
    description = "Returns active checkpoints; includeCompleted adds the completed ones."
    parameters = tool_schema(
        {
            _CONVERSATION_FIELD: probatio.All(str, probatio.Length(min=1)),
            probatio.Optional(
                "includeCompleted", default=False, description="Also completed checkpoints."
            ): bool,
        }
    )
    annotations = READ_ONLY

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        wanted: str | None = args.get("conversationId")
        if wanted is not None:
            ref.scope.check_conversation(wanted)
        listed = ref.runtime.agent.checkpoints(wanted, args["includeCompleted"])
        return {
            "checkpoints": [
                {**item.to_json(), "updated_at": timestamp(item.updated_at)}
                for item in listed
                if item.conversation_id is not None and ref.scope.covers(item.conversation_id)
            ]
        }


class GetCurrentConversationTool(PacerelleTool):
    name = "get_current_conversation"
    title = "Current Pacerelle conversation"
    description = (
        "The most recently observed conversation (as the MCP resource conversation://current): "
        "its id, whether it is a group, who wrote last and when, and its pending requests."
    )
    parameters = tool_schema({})
    annotations = READ_ONLY

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        agent = ref.runtime.agent
        requests = [item.request for item in agent.history().requests if ref.listed(item.request)]
        if not requests:
            return {"conversation": None}
        last = requests[-1]
        pending = agent.pending_requests(last.conversation_id)
        return {
            "conversation": {
                "conversation_id": last.conversation_id,
                "group": last.is_group,
                "last_sender_id": last.sender_id,
                "last_message_id": last.message_id,
                "last_message_at": timestamp(last.received_at),
                "pending": len(pending),
            }
        }


class GetPendingWidgetTool(PacerelleTool):
    name = "get_pending_widget"
    title = "Pending Pacerelle widget answer"
    description = (
        "The latest widget answer not yet marked processed (as the MCP resource widget://pending), "
        "or null. Its widget field holds the answer: ref (the widget id), value or cancelled."
    )
    parameters = tool_schema({})
    annotations = READ_ONLY

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        answers = sorted(
            (
                r
                for r in ref.runtime.agent.pending_requests()
                if r.is_widget_answer and ref.listed(r)
            ),
            key=lambda request: request.received_at,
        )
        return {"widget_answer": request_view(ref, answers[-1]) if answers else None}
