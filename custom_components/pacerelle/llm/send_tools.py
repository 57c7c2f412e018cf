"""Acting tools: send a reply or a widget, mark a request processed, save a checkpoint.

Sends made while the agent is offline are queued like any other (client/values/send_queue.py),
but for LLM_EXPIRE_AFTER only: a model's reply belongs to a live exchange, and a reply
arriving an hour later would answer a question nobody is looking at. The result's
`status` (`queued` or `sent`) tells the model which happened.
"""

import json
from collections.abc import Mapping
from typing import Any, Final

import probatio
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from ..client import (
    BOUNDS,
    CheckpointStatus,
    Reply,
    WidgetError,
    check_widget,
)
from .tools import AgentRef, PacerelleTool, request_view, timestamp, tool_schema

LLM_EXPIRE_AFTER: Final = 300.0
QUEUED_NOTE: Final = (
    " While the agent is offline the message is queued (status queued) and sent once it "
    "reconnects, or dropped after five minutes."
)
SENDS: Final = llm.ToolAnnotations(
    read_only=False, destructive=False, idempotent=False, open_world=True
)
_ID = probatio.All(str, probatio.Length(min=1))
_TARGET_FIELDS: Final[dict[Any, Any]] = {
    probatio.Optional(
        "sourceMessageId",
        description=(
            "The request this answers (recommended): the reply then goes to the right "
            "conversation, device or group."
        ),
    ): _ID,
    probatio.Optional(
        "conversationId", description="Explicit target conversation, for advanced use."
    ): _ID,
    probatio.Optional("to", description="Explicit recipient, for advanced use."): _ID,
}


def _check_target(ref: AgentRef, args: Mapping[str, Any]) -> None:
    """A tool error unless the send stays in the scope the user chose (see LlmScope)."""
    source: str | None = args.get("sourceMessageId")
    if source is not None:
        # The reply goes where the request came from: the request must be in scope, and
        # trusted (the judgement it carries, client/trust/door.py).
        ref.request_in_scope(source)
        ref.check_answerable(source)
        return
    ref.check_recipient(args.get("conversationId"), args.get("to"))


def _sent(reply: Reply) -> dict[str, Any]:
    return {
        "message_id": reply.message_id,
        "conversation_id": reply.conversation_id,
        "to": reply.to,
        "status": reply.status,
        "sent_at": timestamp(reply.sent_at),
    }


class SendMessageTool(PacerelleTool):
    name = "send_message"
    title = "Send a Pacerelle message"
    description = (
        "Sends an end-to-end encrypted reply. Give sourceMessageId (the request you answer) "
        "so it reaches the right conversation, device or group. Sending does not mark the "
        "request processed." + QUEUED_NOTE
    )
    parameters = tool_schema(
        {
            probatio.Required("text", description="The reply text."): probatio.All(
                str, probatio.Length(min=1, max=BOUNDS.send_text_chars)
            ),
            **_TARGET_FIELDS,
            probatio.Optional("replyToMessageId", description="Message to link the reply to."): _ID,
        }
    )
    annotations = SENDS

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        _check_target(ref, args)
        reply = await ref.runtime.agent.send_text(
            args["text"],
            source_message_id=args.get("sourceMessageId"),
            conversation_id=args.get("conversationId"),
            to=args.get("to"),
            reply_to_message_id=args.get("replyToMessageId"),
            expire_after=LLM_EXPIRE_AFTER,
        )
        return _sent(reply)


class SendWidgetTool(PacerelleTool):
    name = "send_widget"
    title = "Send a Pacerelle widget"
    description = (
        "Sends a widget to the same target as a request. widgetJson is a widget.standard v1 "
        'payload (object or JSON text), for example {"type": "widget.standard", "v": 1, '
        '"id": "confirm-1", "kind": "confirm", "spec": {"title": "Publish?"}}. Kinds: '
        "confirm, choice, permission, form, progress, file-picker, datetime. The answer "
        "arrives as a widget.response request (see get_pending_widget)." + QUEUED_NOTE
    )
    parameters = tool_schema(
        {
            probatio.Required(
                "widgetJson", description="A widget.standard v1 payload."
            ): probatio.Any(str, dict),
            **_TARGET_FIELDS,
        }
    )
    annotations = SENDS

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        widget = _widget(args["widgetJson"])  # WidgetError: a tool error (errors.py)
        _check_target(ref, args)
        reply = await ref.runtime.agent.send_widget(
            widget,
            source_message_id=args.get("sourceMessageId"),
            conversation_id=args.get("conversationId"),
            to=args.get("to"),
            expire_after=LLM_EXPIRE_AFTER,
        )
        return {**_sent(reply), "widget_id": widget["id"]}


def _widget(value: str | Mapping[str, Any]) -> dict[str, Any]:
    """The widget, checked per kind; the model may send it as JSON text (as to the MCP server)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise WidgetError("widgetJson", "is not valid JSON") from err
    return check_widget(value)


class MarkProcessedTool(PacerelleTool):
    name = "mark_processed"
    title = "Mark a Pacerelle request processed"
    description = (
        "Marks a request as handled. Only this tool does that: reading and replying don't."
    )
    parameters = tool_schema(
        {
            probatio.Required("messageId", description="The request to mark."): _ID,
            probatio.Optional(
                "note", description="Optional note, up to 2,000 characters."
            ): probatio.All(str, probatio.Length(max=BOUNDS.note_chars)),
        }
    )
    annotations = llm.ToolAnnotations(
        read_only=False, destructive=False, idempotent=False, open_world=False
    )

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        ref.request_in_scope(args["messageId"])
        request = await ref.runtime.agent.mark_processed(args["messageId"], args.get("note"))
        return {"processed": request_view(ref, request), "note": args.get("note")}


class SaveCheckpointTool(PacerelleTool):
    name = "save_checkpoint"
    title = "Save a Pacerelle checkpoint"
    description = (
        "Saves progress on a request so another session can resume it. Set status "
        '"completed" when the work is done.'
    )
    parameters = tool_schema(
        {
            probatio.Required(
                "sourceMessageId", description="The request this work belongs to."
            ): _ID,
            probatio.Required("summary", description="What has been done so far."): probatio.All(
                str, probatio.Length(min=1, max=BOUNDS.checkpoint_text_chars)
            ),
            probatio.Required("nextAction", description="What should happen next."): probatio.All(
                str, probatio.Length(min=1, max=BOUNDS.checkpoint_text_chars)
            ),
            probatio.Optional(
                "hostSessionLabel", description="A label for the host session."
            ): probatio.All(str, probatio.Length(max=BOUNDS.checkpoint_label_chars)),
            probatio.Optional(
                "status", default=CheckpointStatus.ACTIVE.value, description="active or completed."
            ): (probatio.In([status.value for status in CheckpointStatus])),
        }
    )
    annotations = llm.ToolAnnotations(
        read_only=False, destructive=False, idempotent=True, open_world=False
    )

    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        ref.request_in_scope(args["sourceMessageId"])
        checkpoint = await ref.runtime.agent.save_checkpoint(
            args["sourceMessageId"],
            args["summary"],
            args["nextAction"],
            host_session_label=args.get("hostSessionLabel"),
            status=args["status"],
        )
        return {
            "checkpoint": {**checkpoint.to_json(), "updated_at": timestamp(checkpoint.updated_at)}
        }
