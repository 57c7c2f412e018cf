"""What a decrypted payload says: text, chat.message with secrets merged, widget answers."""

import json
from typing import Any

import pytest

from custom_components.pacerelle.client.limits import MAX_ATTACHMENT_TEXT_CHARS
from custom_components.pacerelle.client.values.payloads import (
    CHAT_MESSAGE,
    WIDGET_RESPONSE,
    WIDGET_UPDATE,
    chat_payload,
    parse_content,
)

PUBLIC = ({"id": "a-1", "name": "attachment", "mime": "application/octet-stream", "size": 9},)


def _chat(*attachments: Any, text: object = "look") -> str:
    return json.dumps({"kind": CHAT_MESSAGE, "text": text, "attachments": list(attachments)})


@pytest.mark.parametrize(
    "plaintext", ["hello", "{not json", "[1]", "{" * 50_000, '{"type": "other"}']
)
def test_anything_unknown_is_plain_text(plaintext: str) -> None:
    content = parse_content(plaintext, PUBLIC)
    assert content.kind == "text"
    assert content.text == plaintext
    assert content.attachments == PUBLIC  # the envelope's descriptors, unchanged
    assert content.widget is None


def test_chat_message_secrets_take_precedence_over_the_envelope() -> None:
    secret = {
        "id": "a-1",
        "key_b64": "k",
        "iv_b64": "i",
        "name": "holiday.jpg",
        "mime": "image/jpeg",
        "size": 10,
        "width": 640,
        "height": 480,
        "duration_ms": 0,
    }
    content = parse_content(_chat(secret), PUBLIC)
    assert content.kind == CHAT_MESSAGE
    assert content.text == "look"
    assert content.attachments == (secret,)


@pytest.mark.parametrize(
    ("secret", "kept"),
    [
        ({"id": "a-1", "key_b64": "k"}, {}),  # no IV: not a secret at all
        ({"id": "", "key_b64": "k", "iv_b64": "i"}, {}),
        ("a-1", {}),
        (
            {
                "id": "a-1",
                "key_b64": "k",
                "iv_b64": "i",
                "name": "n" * (MAX_ATTACHMENT_TEXT_CHARS + 1),
            },
            {"key_b64": "k", "iv_b64": "i"},
        ),
        (
            {"id": "a-1", "key_b64": "k", "iv_b64": "i", "mime": "", "size": -1, "width": True},
            {"key_b64": "k", "iv_b64": "i"},
        ),
    ],
)
def test_malformed_secrets_are_dropped_field_by_field(secret: object, kept: dict[str, Any]) -> None:
    content = parse_content(_chat(secret), PUBLIC)
    assert content.kind == CHAT_MESSAGE
    assert content.attachments == ({**PUBLIC[0], **kept},)


def test_chat_message_without_a_list_of_attachments_keeps_the_envelope() -> None:
    plaintext = json.dumps({"kind": CHAT_MESSAGE, "text": "t", "attachments": "nope"})
    assert parse_content(plaintext, PUBLIC).attachments == PUBLIC


def test_chat_message_without_text_is_plain_text() -> None:
    plaintext = _chat(text=5)
    assert parse_content(plaintext, ()).kind == "text"


@pytest.mark.parametrize(
    ("cancelled", "text"), [(True, "Widget cancelled"), (None, "Widget response")]
)
def test_widget_response(cancelled: bool | None, text: str) -> None:
    data = {"type": WIDGET_RESPONSE, "id": "w", "ref": "r", "cancelled": cancelled}
    content = parse_content(json.dumps(data), PUBLIC)
    assert (content.kind, content.text, content.attachments) == (WIDGET_RESPONSE, text, ())
    assert content.widget == data


def test_widget_update_needs_a_patch_object() -> None:
    data = {"type": WIDGET_UPDATE, "id": "w", "ref": "r", "patch": {"value": 1}}
    content = parse_content(json.dumps(data), ())
    assert (content.kind, content.widget) == (WIDGET_UPDATE, data)
    for broken in (data | {"patch": [1]}, data | {"ref": ""}, {"type": WIDGET_RESPONSE, "id": "w"}):
        assert parse_content(json.dumps(broken), ()).kind == "text"


def test_chat_payload_is_text_unless_files_are_attached() -> None:
    assert chat_payload("hi", []) == "hi"
    files = [{"id": "a-1", "key_b64": "k", "iv_b64": "i"}]
    payload = chat_payload("hi", files)
    assert json.loads(payload) == {"kind": CHAT_MESSAGE, "text": "hi", "attachments": files}
    assert parse_content(payload, ()).kind == CHAT_MESSAGE
