"""Strict parsing of gateway frames, the receipt digest, and outgoing frames; runtime tokens."""

import base64
import json
from typing import Any

import pytest

from custom_components.pacerelle.client.crypto_jobs import seal
from custom_components.pacerelle.client.limits import (
    MAX_FRAME_CHARS,
    MAX_MESSAGE_ATTACHMENTS,
    MAX_PENDING,
    low_water,
)
from custom_components.pacerelle.client.outbox.confirmations import CONFIRM_WINDOW, Outbox, Written
from custom_components.pacerelle.client.relay.frames import (
    FrameError,
    IdentityChanged,
    InboundMessage,
    RefusedMessage,
    RelayError,
    build_ack,
    build_message,
    parse_frame,
)
from custom_components.pacerelle.client.relay.tokens import RuntimeTokens, credential_from
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.trust.door import SealRule
from custom_components.pacerelle.client.values import groups, history_v1
from custom_components.pacerelle.client.values.agent_data import AgentData, Conversations
from custom_components.pacerelle.client.values.payloads import Content, parse_content
from custom_components.pacerelle.client.values.requests import Inbox, Receipt, Request
from custom_components.pacerelle.client.values.trust_book import DeviceTrust, TrustBook, TrustState

MESSAGE: dict[str, Any] = {
    "type": "MSG",
    "id": "m1",
    "conversation_id": "c1",
    "from": "u1",
    "from_device_id": "2",
    "to": "a1",
    "payload_b64": base64.b64encode(b"hello").decode(),
    "encrypted": False,
}


def _parse(**changes: Any) -> Any:
    return parse_frame(json.dumps({**MESSAGE, **changes}))


def test_message_is_parsed_with_its_digest() -> None:
    message = _parse()
    assert isinstance(message, InboundMessage)
    assert (message.sender_device_id, message.payload, message.is_group) == ("2", b"hello", False)
    assert _parse().digest == message.digest
    assert _parse(payload_b64=base64.b64encode(b"other").decode()).digest != message.digest
    assert _parse(reply_to_message_id="x").digest != message.digest
    assert _parse(from_device_id=None).sender_device_id == "1"


@pytest.mark.parametrize(
    "changes",
    [
        {"id": ""},
        {"id": 7},
        {"id": "x" * 300},
        {"from": None},
        {"encrypted": "yes"},
        {"payload_b64": "not base64!"},
        {"payload_b64": ""},
        {"from_device_id": "abc"},
        {"from_device_id": "0"},
        {"attachments": "none"},
        {"attachments": [{"id": "a"}]},
        {"attachments": [{"id": "a", "name": "n", "mime": "m", "blob_id": "b", "size": -1}]},
        {
            "attachments": [{"id": "a", "name": "n", "mime": "m", "blob_id": "b", "size": 1}]
            * (MAX_MESSAGE_ATTACHMENTS + 1)
        },
    ],
)
def test_malformed_messages_are_refused(changes: dict[str, Any]) -> None:
    """Never a message: skipped, or (routing readable) refused for good, to acknowledge."""
    try:
        frame = _parse(**changes)
    except FrameError:
        return
    assert isinstance(frame, RefusedMessage)


def test_other_frames() -> None:
    assert parse_frame('{"type": "PING"}') is None
    assert parse_frame('{"type": "IDENTITY_CHANGED", "user_id": "u1"}') == IdentityChanged(
        "u1", False
    )
    assert parse_frame('{"type": "IDENTITY_CHANGED", "agent_id": "a2"}') == IdentityChanged(
        "a2", True
    )
    assert parse_frame('{"type": "ERROR", "error": "no", "message_id": "m"}') == RelayError(
        "no", "m"
    )
    for bad in ("[]", "nope", '"text"', " " * (MAX_FRAME_CHARS + 1)):
        with pytest.raises(FrameError):
            parse_frame(bad)


def test_outgoing_frames() -> None:
    message = _parse()
    assert json.loads(build_ack(message)) == {
        "type": "ACK_READ",
        "to": "u1",
        "message_id": "m1",
        "conversation_id": "c1",
    }
    frame = json.loads(
        build_message(
            message_id="r1",
            conversation_id="c1",
            to="u1",
            payload=b"x",
            encrypted=True,
            to_device_id="2",
        )
    )
    assert frame == {
        "type": "MSG",
        "id": "r1",
        "conversation_id": "c1",
        "to": "u1",
        "payload_b64": "eA==",
        "encrypted": True,
        "to_device_id": "2",
    }


def test_receipts() -> None:
    message = _parse()
    assert isinstance(message, InboundMessage)
    request = Request.build(message, Content("text", "hello"), 1.0)
    inbox = Inbox()
    assert inbox.receipt("m1", message.digest) is Receipt.NEW
    inbox = inbox.with_received(message.digest, request)
    assert inbox.receipt("m1", message.digest) is Receipt.RECEIVED
    assert inbox.receipt("m1", "other") is Receipt.CONFLICT
    inbox = inbox.accept(["m1"])
    assert inbox.receipt("m1", message.digest) is Receipt.ACCEPTED
    assert inbox.receipt("m1", "other") is Receipt.CONFLICT
    assert list(inbox.pending) == ["m1"]
    assert Inbox.from_json(json.loads(json.dumps(inbox.to_json()))) == inbox
    assert inbox.processed("m1").pending == {}


def test_history_delivery_and_keys() -> None:
    key = {"key_id": "hk1", "epoch": 1, "raw_key_b64": base64.b64encode(b"k" * 32).decode()}
    wrapped = json.dumps({"type": "pacerelle.delivery", "v": 1, "body": "hi", "history_key": key})
    body, held = history_v1.unwrap_delivery(wrapped)
    assert body == "hi"
    assert held is not None
    assert history_v1.unwrap_delivery("plain") == ("plain", None)
    other = history_v1.HistoryKey("hk2", 1, b"k" * 32)
    with pytest.raises(history_v1.HistoryKeyError):
        history_v1.check_key(held, other)
    with pytest.raises(history_v1.HistoryKeyError):
        history_v1.unwrap_delivery(wrapped.replace('"epoch": 1', '"epoch": 2'))
    aad = history_v1.aad("c", "m", "a", held)
    assert aad == b"pacerelle:conversation-history:v1:c:m:a:agent:hk1:1"


def test_content_kinds() -> None:
    assert parse_content("hi", []).kind == "text"
    answer = parse_content('{"type": "widget.response", "id": "r", "ref": "w", "value": 1}', [])
    assert (answer.kind, answer.widget) == (
        "widget.response",
        {"type": "widget.response", "id": "r", "ref": "w", "value": 1},
    )
    public = [
        {
            "id": "f",
            "name": "attachment",
            "mime": "application/octet-stream",
            "blob_id": "b",
            "size": 3,
        }
    ]
    chat = parse_content(
        json.dumps(
            {
                "kind": "chat.message",
                "text": "t",
                "attachments": [
                    {"id": "f", "key_b64": "k", "iv_b64": "i", "name": "a.png", "mime": "image/png"}
                ],
            }
        ),
        public,
    )
    assert chat.attachments[0]["name"] == "a.png"
    assert chat.attachments[0]["key_b64"] == "k"


def test_outbox_rule() -> None:
    outbox = Outbox()
    outbox.written(Written("old", "c", 1, 100.0))
    outbox.written(Written("new", "c", 1, 100.0 + CONFIRM_WINDOW))
    outbox.written(Written("clean", "c", 2, 101.0))
    lost = outbox.connection_ended(1, 100.0 + CONFIRM_WINDOW + 0.5, clean=False)
    assert [send.message_id for send in lost] == ["new"]
    assert outbox.connection_ended(2, 101.5, clean=True) == []


class _Issued:
    def __init__(self, token: str, expires_in: float) -> None:
        self.agent_token = token
        self.expires_in = expires_in


async def test_tokens_renew_before_expiry_and_share_requests() -> None:
    now = [1000.0]
    issued = iter(["t1", "t2", "t3"])

    async def fetch() -> _Issued:
        return _Issued(next(issued), 900)

    tokens = RuntimeTokens(fetch, clock=lambda: now[0])
    assert (await tokens.valid()).token == "t1"
    now[0] += 600
    assert (await tokens.valid()).token == "t1"
    now[0] += 181  # past 900 - min(180, 120): renewed two minutes before expiry
    assert (await tokens.valid()).token == "t2"
    assert (await tokens.fresh()).token == "t3"
    tokens.invalidate("t3")
    assert tokens.current is None
    short = credential_from(_Issued("s", 2), 0.0)
    assert (short.renew_at, short.expires_at) == pytest.approx((1.6, 2.0))


def test_pending_requests_and_receipts_are_bounded() -> None:
    inbox = Inbox()
    for index in range(MAX_PENDING + 5):
        message = _parse(id=f"m{index}")
        assert isinstance(message, InboundMessage)
        request = Request.build(message, Content("text", "x"), float(index))
        inbox = inbox.with_received(message.digest, request).accept([message.message_id])
    # Pending requests are bounded, with a count, before each save (store_bounds.py).
    data = within_bounds(AgentData(AgentSignalState.new(), inbox=inbox))
    # Past the bound, down to its low-water mark (limits.LOW_WATER_PERCENT), oldest first.
    kept = low_water(MAX_PENDING)
    assert len(data.inbox.pending) == kept
    assert list(data.inbox.pending) == [f"m{i}" for i in range(MAX_PENDING + 5 - kept, 505)]
    assert data.evictions.pending_requests == MAX_PENDING + 5 - kept
    assert len(inbox.accepted) == MAX_PENDING + 5  # receipts are kept longer


def test_group_seal_and_missing_session() -> None:
    signal = AgentSignalState.new()
    identity = b"\x05" + bytes(32)
    key = groups.GroupKey("c1", "k1", 1, bytes(32), "u1", "1", identity)
    rule = SealRule(TrustBook({"u1|1": DeviceTrust("u1", "1", identity, TrustState.TRUSTED)}))
    data = AgentData(signal, conversations=Conversations().with_group_key(key))
    sealed = seal(
        data,
        agent_id="a1",
        message_id="r1",
        conversation_id="c1",
        to="group:c1",
        device_id=None,
        plaintext="hello all",
        encrypted=True,
        rule=rule,
    )
    assert groups.open_message(key, groups.parse_message(sealed.payload)) == "hello all"
    # No Signal state used for a group (the key is marked used: group_key_bounds.py).
    assert sealed.data.signal is data.signal
    assert list(sealed.data.conversations.group_keys) == [key.name]
    with pytest.raises(SignalError) as caught:
        seal(
            data,
            agent_id="a1",
            message_id="r2",
            conversation_id="c1",
            to="u1",
            device_id="1",
            plaintext="hi",
            encrypted=True,
            rule=rule,
        )
    assert caught.value.kind is SignalErrorKind.NO_SESSION
