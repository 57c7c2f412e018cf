"""Plaintext payloads the runtime reads and writes (inside the encryption).

Incoming: plain text, `chat.message` with attachments (secrets inside, neutral descriptors
in the envelope), widget answers and updates (kept as parsed JSON; the widget layer checks
them). Outgoing: text, or `chat.message` when files are attached.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_ATTACHMENT_TEXT_CHARS
from .widgets import WIDGET_RESPONSE, WIDGET_UPDATE

CHAT_MESSAGE = "chat.message"
PLAIN_TEXT = "text"  # the kind of a plain-text payload
_SECRET_STRINGS = ("key_b64", "iv_b64")
_SECRET_TEXT = ("name", "mime")
_SECRET_COUNTS = ("size", "width", "height", "duration_ms")
PUBLIC_ATTACHMENT_FIELDS = ("id", "name", "mime", "size", "width", "height", "duration_ms")
"""What the host is shown of an attachment: never its key, IV, blob id or digest."""


@dataclass(frozen=True, slots=True)
class Content:
    """What a request says: its kind, text, attachments and any widget answer."""

    kind: str
    text: str
    attachments: tuple[Mapping[str, Any], ...] = ()
    widget: Mapping[str, Any] | None = field(default=None)


def parse_content(plaintext: str, public: Sequence[Mapping[str, Any]]) -> Content:
    """The request inside `plaintext`, with the envelope's attachment descriptors merged."""
    parsed = json_object(plaintext)
    if parsed is None:
        return Content(PLAIN_TEXT, plaintext, _merge(public, {}))
    kind = parsed.get("type")
    if kind == WIDGET_RESPONSE and _ids(parsed, "id", "ref"):
        text = "Widget cancelled" if parsed.get("cancelled") is True else "Widget response"
        return Content(WIDGET_RESPONSE, text, (), parsed)
    if (
        kind == WIDGET_UPDATE
        and _ids(parsed, "id", "ref")
        and isinstance(parsed.get("patch"), dict)
    ):
        return Content(WIDGET_UPDATE, "Widget update", (), parsed)
    if parsed.get("kind") == CHAT_MESSAGE and isinstance(parsed.get("text"), str):
        return Content(CHAT_MESSAGE, parsed["text"], _merge(public, _secrets(parsed)))
    return Content(PLAIN_TEXT, plaintext, _merge(public, {}))


def public_attachment(item: Mapping[str, Any]) -> dict[str, Any]:
    """An attachment as the host sees it (PUBLIC_ATTACHMENT_FIELDS only)."""
    return {name: item[name] for name in PUBLIC_ATTACHMENT_FIELDS if name in item}


def chat_payload(text: str, attachments: Sequence[Mapping[str, Any]]) -> str:
    """The plaintext of an outgoing message: the text, or chat.message with file secrets."""
    if not attachments:
        return text
    return json.dumps({"kind": CHAT_MESSAGE, "text": text, "attachments": list(attachments)})


def json_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object, or None (plain text, other JSON, or too deeply nested)."""
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a sender's deep nesting is text, not a fault
        return None
    return value if isinstance(value, dict) else None


def _ids(data: Mapping[str, Any], *names: str) -> bool:
    return all(isinstance(data.get(name), str) and data[name] for name in names)


def _secrets(parsed: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per attachment id: the key, IV and true metadata carried inside the encryption."""
    found: dict[str, dict[str, Any]] = {}
    items = parsed.get("attachments")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not _ids(item, "id", *_SECRET_STRINGS):
            continue
        secret: dict[str, Any] = {name: item[name] for name in _SECRET_STRINGS}
        for name in _SECRET_TEXT:
            value = item.get(name)
            if isinstance(value, str) and 0 < len(value) <= MAX_ATTACHMENT_TEXT_CHARS:
                secret[name] = value
        for name in _SECRET_COUNTS:
            value = item.get(name)
            if type(value) is int and value >= 0:
                secret[name] = value
        found[item["id"]] = secret
    return found


def _merge(
    public: Sequence[Mapping[str, Any]], secrets: Mapping[str, Mapping[str, Any]]
) -> tuple[Mapping[str, Any], ...]:
    """The envelope's descriptors, with the encrypted metadata taking precedence."""
    return tuple({**item, **secrets.get(str(item.get("id")), {})} for item in public)
