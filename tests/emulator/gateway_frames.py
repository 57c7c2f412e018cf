"""Checks of the frames an agent sends on the gateway, with Pacerelle's routing rules."""

import base64
import binascii

from .state import Installation, Json

MAX_ID_LENGTH = 128
MAX_ATTACHMENTS = 32
_OPTIONAL_STRINGS = ("to_device_id", "reply_to_message_id")


class FrameError(ValueError):
    """A frame the relay refuses; the connection stays open."""


def _identifier(frame: Json, name: str) -> str:
    value = frame.get(name)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID_LENGTH:
        raise FrameError(f"`{name}` must be a non-empty string")
    return value


def check_ack(frame: Json) -> str:
    return _identifier(frame, "message_id")


def check_agent_message(installation: Installation, frame: Json) -> Json:
    """The envelope as the relay forwards it, or FrameError."""
    message_id = _identifier(frame, "id")
    conversation_id = _identifier(frame, "conversation_id")
    if conversation_id != installation.conversation_id:
        raise FrameError("the agent is not a member of this conversation")
    to = _identifier(frame, "to")
    if to == f"group:{conversation_id}":
        raise FrameError("this conversation is not a group")
    if to != installation.owner_id:
        raise FrameError("`to` is not a member of this conversation")
    if not isinstance(frame.get("encrypted"), bool):
        raise FrameError("`encrypted` must be a boolean")
    payload = frame.get("payload_b64")
    try:
        if not isinstance(payload, str) or not base64.b64decode(payload, validate=True):
            raise FrameError("`payload_b64` must be non-empty base64")
    except binascii.Error as err:
        raise FrameError("`payload_b64` must be non-empty base64") from err
    envelope: Json = {
        "type": "MSG",
        "id": message_id,
        "conversation_id": conversation_id,
        "from": installation.agent_id,
        "to": to,
        "payload_b64": payload,
        "encrypted": frame["encrypted"],
    }
    for name in _OPTIONAL_STRINGS:
        if name in frame and frame[name] is not None:
            envelope[name] = _identifier(frame, name)
    attachments = frame.get("attachments")
    if attachments is not None:
        if (
            not isinstance(attachments, list)
            or len(attachments) > MAX_ATTACHMENTS
            or not all(isinstance(item, dict) for item in attachments)
        ):
            raise FrameError("`attachments` must be a list of objects")
        envelope["attachments"] = attachments
    record = frame.get("history_record")
    if record is not None:
        if not isinstance(record, dict):
            raise FrameError("`history_record` must be an object")
        envelope["history_record"] = record
    return envelope
