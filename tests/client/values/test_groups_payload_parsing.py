"""Group keys and payloads: every malformed field refused as GroupError; seal/open round trip."""

import base64
import json
from typing import Any

import pytest

from custom_components.pacerelle.client.values.groups import (
    ALGORITHM,
    MESSAGE_TYPE,
    SENDER_KEY_TYPE,
    GroupError,
    GroupKey,
    open_message,
    parse_message,
    parse_sender_key,
    seal_message,
)

KEY = GroupKey("c-group", "k-1", 3, bytes(range(32)))


def _envelope(**changes: Any) -> bytes:
    data = KEY.to_json() | changes
    return json.dumps({k: v for k, v in data.items() if v is not None}).encode()


def test_sender_key_round_trip() -> None:
    key = parse_sender_key(_envelope(), conversation_id="c-group", key_id="k-1", epoch=3)
    assert key == KEY
    assert key.name == "c-group:k-1:3"


@pytest.mark.parametrize(
    "changes",
    [
        {"type": MESSAGE_TYPE},
        {"v": 2},
        {"alg": "AES-128-GCM"},
        {"conversation_id": ""},
        {"key_id": "k" * 129},
        {"epoch": 0},
        {"epoch": True},
        {"epoch": "3"},
        {"raw_key_b64": "not base64!"},
        {"raw_key_b64": 12},
        {"raw_key_b64": base64.b64encode(bytes(31)).decode()},
    ],
)
def test_malformed_sender_keys_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(GroupError):
        parse_sender_key(_envelope(**changes), conversation_id="c-group", key_id="k-1", epoch=3)


def test_sender_key_that_is_not_json_is_refused() -> None:
    with pytest.raises(GroupError, match="not JSON"):
        parse_sender_key(b"\xff{", conversation_id="c-group", key_id="k-1", epoch=3)


@pytest.mark.parametrize(
    "labels",
    [
        {"conversation_id": "c-other", "key_id": "k-1", "epoch": 3},
        {"conversation_id": "c-group", "key_id": "k-2", "epoch": 3},
        {"conversation_id": "c-group", "key_id": "k-1", "epoch": 4},
    ],
)
def test_sender_key_must_match_its_envelope(labels: dict[str, Any]) -> None:
    with pytest.raises(GroupError, match="does not match"):
        parse_sender_key(_envelope(), **labels)


def test_seal_then_open() -> None:
    payload = seal_message(KEY, "hello group ✓")
    message = parse_message(payload)
    assert message.key_name == KEY.name
    assert len(message.iv) == 12
    assert open_message(KEY, message) == "hello group ✓"


def test_a_message_under_another_key_or_label_does_not_decrypt() -> None:
    message = parse_message(seal_message(KEY, "secret"))
    other = GroupKey("c-group", "k-1", 3, bytes(32))
    with pytest.raises(GroupError, match="does not decrypt"):
        open_message(other, message)
    relabelled = GroupKey("c-group", "k-1", 4, KEY.raw_key)  # same bytes, other epoch: other AAD
    with pytest.raises(GroupError, match="does not decrypt"):
        open_message(relabelled, message)


def _payload(**changes: Any) -> bytes:
    data = json.loads(seal_message(KEY, "x")) | changes
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[1]",
        _payload(type=SENDER_KEY_TYPE),
        _payload(alg=ALGORITHM.lower()),
        _payload(iv_b64=base64.b64encode(bytes(11)).decode()),
        _payload(iv_b64="***"),
        _payload(ciphertext_b64=None),
    ],
    # Named: the sealed payloads carry a random IV, and the workers of pytest-xdist
    # (scripts/test) must collect the same test ids.
    ids=[
        "not_json",
        "not_an_object",
        "sender_key_type",
        "lowercase_alg",
        "short_iv",
        "iv_not_base64",
        "no_ciphertext",
    ],
)
def test_malformed_group_payloads_are_refused(payload: bytes) -> None:
    with pytest.raises(GroupError):
        parse_message(payload)
