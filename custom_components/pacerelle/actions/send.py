"""Actions that write to the person: send_message, send_widget, update_widget, clear_queue.

While the agent is offline a send is queued (client/values/send_queue.py) and the action returns
at once with `status: queued`; `expire_after` says how long it may wait (0: fail at once
with `not_connected`, as before the queue existed). `pacerelle_message_status` follows it.
"""

import json
from datetime import timedelta
from typing import Any, Final

import probatio
from homeassistant.core import ServiceCall, ServiceResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv

from ..client import (
    BOUNDS,
    OutgoingFile,
    Reply,
    WidgetError,
    check_widget,
)
from ..const import DOMAIN
from ..errors import action_error
from ..files.attachments import (
    async_camera_snapshot,
    async_read_file,
)
from .common import (
    AGENT_FIELDS,
    ATTR_WIDGET_ID,
    TARGET_FIELDS,
    client_errors,
    each_conversation,
    resolve_entry,
    target_fields,
)

ATTR_TEXT: Final = "text"
ATTR_REPLY_TO: Final = "reply_to_message_id"
ATTR_ATTACHMENTS: Final = "attachments"
ATTR_SNAPSHOTS: Final = "camera_snapshots"
ATTR_WIDGET: Final = "widget"
ATTR_SPEC: Final = "spec"
ATTR_EXPIRES_AT: Final = "expires_at"
ATTR_EXPIRE_AFTER: Final = "expire_after"

# How long a send may wait queued while offline (a duration; 0 = refuse when offline).
EXPIRE_AFTER_FIELD: Final = {
    probatio.Optional(
        ATTR_EXPIRE_AFTER, default=timedelta(seconds=BOUNDS.default_expire_after)
    ): probatio.All(
        cv.time_period,
        probatio.Range(min=timedelta(0), max=timedelta(seconds=BOUNDS.expire_after)),
    ),
}

SEND_MESSAGE_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Optional(ATTR_TEXT, default=""): cv.string,
        **TARGET_FIELDS,
        probatio.Optional(ATTR_REPLY_TO): cv.string,
        probatio.Optional(ATTR_ATTACHMENTS, default=list): probatio.All(
            cv.ensure_list, [cv.string]
        ),
        probatio.Optional(ATTR_SNAPSHOTS, default=list): cv.entities_domain("camera"),
        **EXPIRE_AFTER_FIELD,
    }
)
SEND_WIDGET_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Required(ATTR_WIDGET): probatio.Any(dict, cv.string),
        **TARGET_FIELDS,
        **EXPIRE_AFTER_FIELD,
    }
)
UPDATE_WIDGET_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Required(ATTR_WIDGET_ID): cv.string,
        probatio.Optional(ATTR_SPEC): dict,
        probatio.Optional(ATTR_EXPIRES_AT): cv.string,
        **EXPIRE_AFTER_FIELD,
    }
)
CLEAR_QUEUE_SCHEMA: Final = probatio.Schema(AGENT_FIELDS)


def expire_after(call: ServiceCall) -> float:
    """The call's `expire_after`, in seconds."""
    period: timedelta = call.data[ATTR_EXPIRE_AFTER]
    return period.total_seconds()


def _one_each(responses: list[dict[str, Any]]) -> dict[str, Any]:
    """The first send's answer, with each send's where and id under `messages`."""
    shown = ("message_id", "conversation_id", "to", "to_device_id", "status")
    messages = [{name: response[name] for name in shown} for response in responses]
    return {**responses[0], "messages": messages}


def reply_response(reply: Reply, **extra: Any) -> dict[str, Any]:
    """What a send action returns: where the message went and its id."""
    return {
        "message_id": reply.message_id,
        "conversation_id": reply.conversation_id,
        "to": reply.to,
        "to_device_id": reply.to_device_id,
        "status": reply.status,
        **extra,
    }


async def _files(call: ServiceCall) -> list[OutgoingFile]:
    paths: list[str] = call.data[ATTR_ATTACHMENTS]
    cameras: list[str] = call.data[ATTR_SNAPSHOTS]
    if len(paths) + len(cameras) > BOUNDS.files_per_send:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="too_many_attachments",
            translation_placeholders={"limit": str(BOUNDS.files_per_send)},
        )
    files = [await async_read_file(call.hass, path) for path in paths]
    files += [await async_camera_snapshot(call.hass, entity_id) for entity_id in cameras]
    return files


async def async_send_message(call: ServiceCall) -> ServiceResponse:
    """One message to each conversation named (in order; a refusal stops the rest): the
    answer of the first, and every message under `messages`."""
    return _one_each([await _send_message(each) for each in each_conversation(call)])


async def _send_message(call: ServiceCall) -> dict[str, Any]:
    entry = resolve_entry(call.hass, call)
    target = target_fields(call)
    text: str = call.data[ATTR_TEXT]
    files = await _files(call)
    if not text.strip() and not files:
        raise ServiceValidationError(translation_domain=DOMAIN, translation_key="text_required")
    agent = entry.runtime_data.agent
    with client_errors(call.hass, entry, target["source_message_id"]):
        reply = await agent.send_text(
            text,
            **target,
            reply_to_message_id=call.data.get(ATTR_REPLY_TO),
            files=files,
            expire_after=expire_after(call),
        )
    return reply_response(reply, attachments=[{"name": f.name, "mime": f.mime} for f in files])


def parse_widget_field(value: Any) -> dict[str, Any]:
    """The `widget` field (an object, or JSON text of one), checked per kind."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="widget_not_json",
                translation_placeholders={"error": str(err)},
            ) from err
    try:
        return check_widget(value)
    except WidgetError as err:
        raise action_error(err) from err


async def async_send_widget(call: ServiceCall) -> ServiceResponse:
    """The widget to each conversation named, as `send_message` does."""
    return _one_each([await _send_widget(each) for each in each_conversation(call)])


async def _send_widget(call: ServiceCall) -> dict[str, Any]:
    entry = resolve_entry(call.hass, call)
    target = target_fields(call)
    widget = parse_widget_field(call.data[ATTR_WIDGET])
    with client_errors(call.hass, entry, target["source_message_id"]):
        reply = await entry.runtime_data.agent.send_widget(
            widget, **target, expire_after=expire_after(call)
        )
    return reply_response(reply, widget_id=widget["id"])


async def async_update_widget(call: ServiceCall) -> ServiceResponse:
    """Patch a widget we sent, to the same person and device (progress, new expiry...)."""
    entry = resolve_entry(call.hass, call)
    agent = entry.runtime_data.agent
    widget_id: str = call.data[ATTR_WIDGET_ID]
    sent = agent.widget(widget_id)
    if sent is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_widget",
            translation_placeholders={"widget_id": widget_id},
        )
    patch = {name: call.data[name] for name in (ATTR_SPEC, ATTR_EXPIRES_AT) if name in call.data}
    try:
        update = sent.update(patch)
    except WidgetError as err:
        raise action_error(err) from err
    with client_errors(call.hass, entry):
        reply = await agent.send_widget(
            update,
            conversation_id=sent.last.conversation_id,
            to=sent.last.to,
            to_device_id=sent.last.to_device_id,
            expire_after=expire_after(call),
        )
    return reply_response(reply, widget_id=widget_id)


async def async_clear_queue(call: ServiceCall) -> ServiceResponse:
    """Drop every send still queued while offline (each reported `cleared`)."""
    entry = resolve_entry(call.hass, call)
    with client_errors(call.hass, entry):
        cleared = await entry.runtime_data.agent.clear_queue()
    return {"cleared": cleared}
