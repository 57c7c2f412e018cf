"""history-v1: the delivery wrapper, the key's exact shape, key changes refused, sealed records."""

import base64
import json
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from custom_components.pacerelle.client.values.history_v1 import (
    AAD_VERSION,
    HISTORY_EPOCH,
    HistoryKey,
    HistoryKeyError,
    aad,
    check_key,
    seal_record,
    unwrap_delivery,
)

RAW = bytes(range(32))
KEY_JSON = {"key_id": "hk-1", "epoch": 1, "raw_key_b64": base64.b64encode(RAW).decode()}


def _wrapper(**changes: Any) -> str:
    data = {"type": "pacerelle.delivery", "v": 1, "body": "hi", "history_key": KEY_JSON} | changes
    return json.dumps(data)


def test_a_wrapper_yields_its_body_and_key() -> None:
    body, key = unwrap_delivery(_wrapper())
    assert body == "hi"
    assert key == HistoryKey("hk-1", HISTORY_EPOCH, RAW)
    assert HistoryKey.from_json(key.to_json()) == key


@pytest.mark.parametrize(
    "text",
    ["plain text", "{not json", "[1, 2]", '{"type": "other", "body": "x"}', "{" * 100_000],
)
def test_anything_else_is_plain_text(text: str) -> None:
    assert unwrap_delivery(text) == (text, None)


@pytest.mark.parametrize("changes", [{"v": 2}, {"body": 5}, {"body": None}])
def test_a_malformed_wrapper_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(HistoryKeyError, match="wrapper"):
        unwrap_delivery(_wrapper(**changes))


@pytest.mark.parametrize(
    ("key", "complaint"),
    [
        (None, "exactly"),
        ("hk-1", "exactly"),
        (KEY_JSON | {"extra": 1}, "exactly"),
        (KEY_JSON | {"key_id": ""}, "key id"),
        (KEY_JSON | {"key_id": "a:b"}, "key id"),
        (KEY_JSON | {"key_id": "bell\x07"}, "key id"),
        (KEY_JSON | {"key_id": "k" * 129}, "key id"),
        (KEY_JSON | {"key_id": 7}, "key id"),
        (KEY_JSON | {"epoch": 2}, "epoch"),
        (KEY_JSON | {"epoch": True}, "epoch"),
        (KEY_JSON | {"raw_key_b64": "!!!"}, "32 bytes"),
        (KEY_JSON | {"raw_key_b64": base64.b64encode(bytes(16)).decode()}, "32 bytes"),
    ],
)
def test_a_malformed_key_is_refused(key: object, complaint: str) -> None:
    with pytest.raises(HistoryKeyError, match=complaint):
        unwrap_delivery(_wrapper(history_key=key))


def test_only_the_held_key_is_accepted() -> None:
    held = HistoryKey("hk-1", 1, RAW)
    check_key(None, held)
    check_key(held, HistoryKey("hk-1", 1, RAW))
    with pytest.raises(HistoryKeyError, match="changed"):
        check_key(held, HistoryKey("hk-1", 1, bytes(32)))
    with pytest.raises(HistoryKeyError, match="changed"):
        check_key(held, HistoryKey("hk-2", 1, RAW))


def test_a_sealed_record_opens_only_with_its_own_associated_data() -> None:
    key = HistoryKey("hk-1", 1, RAW)
    record = seal_record("the text", key, conversation_id="c", message_id="m", agent_id="a")
    assert record["key_id"] == "hk-1"
    assert record["epoch"] == 1
    assert record["aad_version"] == AAD_VERSION
    iv = base64.b64decode(record["iv_b64"])
    sealed = base64.b64decode(record["ciphertext_b64"])
    good = aad("c", "m", "a", key)
    assert good == b"pacerelle:conversation-history:v1:c:m:a:agent:hk-1:1"
    assert AESGCM(RAW).decrypt(iv, sealed, good) == b"the text"
    with pytest.raises(InvalidTag):
        AESGCM(RAW).decrypt(iv, sealed, aad("c", "m-other", "a", key))
