"""open_batch and seal, the runtime's CPU work, on real crypto: what each message becomes
(a request, a refusal, a deferral) and that a refused one leaves the agent's data as it was."""

import base64
import json
import logging
from typing import Any

import pytest

from custom_components.pacerelle.client import crypto_jobs
from custom_components.pacerelle.client.crypto_jobs import (
    MissingGroupKeyError,
    open_batch,
    seal,
)
from custom_components.pacerelle.client.relay.frames import InboundMessage, group_recipient
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.trust.door import SealRule
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.agent_data import AgentData, Conversations
from custom_components.pacerelle.client.values.history_v1 import HistoryKey
from custom_components.pacerelle.client.values.trust_book import TrustBook
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

CONVERSATION = "c-1"
KEY = groups.GroupKey(CONVERSATION, "k-1", 1, bytes(range(32)))
HISTORY_RAW = bytes(32)


def _message(
    payload: bytes,
    *,
    message_id: str = "m-1",
    encrypted: bool = True,
    to: str = "a-1",
    conversation_id: str = CONVERSATION,
) -> InboundMessage:
    return InboundMessage(
        message_id, conversation_id, "u-1", "1", to, payload, encrypted, None, (), message_id
    )


def _open(data: AgentData, *messages: InboundMessage, **kwargs: Any) -> tuple[AgentData, list]:
    options: dict[str, Any] = {"require_encryption": True, "now": 1.0, "envelopes": {}}
    return open_batch(data, list(messages), **(options | kwargs))


def test_plain_text_is_refused_while_encryption_is_required() -> None:
    data = AgentData(AgentSignalState.new())
    message = _message(b"hello", encrypted=False)
    after, [opened] = _open(data, message)
    assert after is data
    assert opened.request is None
    assert "encryption is required" in (opened.refusal or "")
    after, [opened] = _open(data, message, require_encryption=False)
    assert opened.request is not None
    assert opened.request.text == "hello"


def test_a_group_message_naming_another_conversation_is_refused() -> None:
    data = AgentData(AgentSignalState.new(), conversations=Conversations().with_group_key(KEY))
    payload = groups.seal_message(KEY, "for c-1")
    # Relayed into conversation c-2 (whose members would see it as theirs): refused.
    message = _message(payload, conversation_id="c-2", to=group_recipient("c-2"))
    after, [opened] = _open(data, message)
    assert after is data
    assert "another conversation" in (opened.refusal or "")
    # In its own conversation it opens.
    _, [opened] = _open(data, _message(payload, to=group_recipient(CONVERSATION)))
    assert opened.request is not None
    assert opened.request.text == "for c-1"


def test_a_group_message_without_its_key_is_deferred() -> None:
    data = AgentData(AgentSignalState.new())
    message = _message(groups.seal_message(KEY, "later"), to=group_recipient(CONVERSATION))
    after, [opened] = _open(data, message)
    assert after is data
    assert opened.deferred
    assert opened.refusal is None


def test_a_bug_refuses_only_its_own_message(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected exception is logged and refuses its message; the batch goes on."""
    real = crypto_jobs.parse_content

    def buggy(body: str, attachments: Any) -> Any:
        if body == "boom":
            raise RuntimeError("a bug")
        return real(body, attachments)

    monkeypatch.setattr(crypto_jobs, "parse_content", buggy)
    data = AgentData(AgentSignalState.new())
    messages = [
        _message(b"boom", message_id="m-1", encrypted=False),
        _message(b"fine", message_id="m-2", encrypted=False),
    ]
    with caplog.at_level(logging.ERROR):
        _, (first, second) = _open(data, *messages, require_encryption=False)
    assert first.refusal == "unexpected RuntimeError"
    assert second.request is not None
    assert second.request.text == "fine"
    assert "Unexpected error opening message m-1" in caplog.text


@pytest.mark.parametrize(
    "envelope",
    [
        {"conversation_id": "c-other", "key_id": "k-9", "epoch": 1, "sender_id": "u-1"},
        {"conversation_id": CONVERSATION, "key_id": 9, "epoch": 1, "sender_id": "u-1"},
        {"conversation_id": CONVERSATION, "key_id": "k-9", "epoch": "1", "sender_id": "u-1"},
        {"conversation_id": CONVERSATION, "key_id": "k-9", "epoch": 1, "envelope_b64": 5},
        # Well-formed but not a Signal message from anyone we have a session with.
        {
            "conversation_id": CONVERSATION,
            "key_id": "k-9",
            "epoch": 1,
            "sender_id": "u-1",
            "envelope_b64": base64.b64encode(b"\x33" * 60).decode(),
        },
        {
            "conversation_id": CONVERSATION,
            "key_id": "k-9",
            "epoch": 1,
            "sender_id": "u-1",
            "sender_device_id": "not a number",
            "envelope_b64": "",
        },
    ],
)
def test_group_key_envelopes_that_do_not_open_are_ignored(envelope: dict[str, Any]) -> None:
    envelope.setdefault("envelope_b64", "AAAA")
    data = AgentData(AgentSignalState.new(), conversations=Conversations().with_group_key(KEY))
    after, [] = _open(data, envelopes={CONVERSATION: [envelope]})
    assert after == data


def test_an_envelope_for_a_key_already_held_is_not_opened_again() -> None:
    data = AgentData(AgentSignalState.new(), conversations=Conversations().with_group_key(KEY))
    envelope = {
        "conversation_id": CONVERSATION,
        "key_id": KEY.key_id,
        "epoch": KEY.epoch,
        "sender_id": "u-1",
        "envelope_b64": "garbage that would be refused if opened",
    }
    after, [] = _open(data, envelopes={CONVERSATION: [envelope]})
    assert after is data


def test_seal_in_the_clear_and_to_a_group_without_a_key() -> None:
    data = AgentData(AgentSignalState.new())
    options: dict[str, Any] = {
        "agent_id": "a-1",
        "message_id": "r-1",
        "device_id": None,
        "rule": SealRule(TrustBook()),
    }
    sealed = seal(
        data, conversation_id=CONVERSATION, to="u-1", plaintext="hi", encrypted=False, **options
    )
    assert (sealed.data, sealed.payload, sealed.history_record) == (data, b"hi", None)
    with pytest.raises(MissingGroupKeyError):
        seal(
            data,
            conversation_id=CONVERSATION,
            to=group_recipient(CONVERSATION),
            plaintext="hi all",
            encrypted=True,
            **options,
        )


@pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")
def test_a_history_key_is_learned_and_the_reply_carries_a_record() -> None:
    """A person's first message hands over the history key; our reply opens on their side
    and carries the history record under that key."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    wrapper = {
        "type": "pacerelle.delivery",
        "v": 1,
        "body": "hello agent",
        "history_key": {
            "key_id": "hk-1",
            "epoch": 1,
            "raw_key_b64": base64.b64encode(HISTORY_RAW).decode(),
        },
    }
    first = _message(human.encrypt(AGENT_NAME, json.dumps(wrapper).encode()))
    data, [opened] = _open(AgentData(agent.state), first)
    assert opened.request is not None
    assert opened.request.text == "hello agent"
    assert opened.new_session
    assert data.conversations.history_keys[CONVERSATION] == HistoryKey("hk-1", 1, HISTORY_RAW)
    assert data.conversations.last_devices  # the device to answer is remembered

    sealed = seal(
        data,
        agent_id="a-1",
        message_id="r-1",
        conversation_id=CONVERSATION,
        to="u-1",
        device_id="1",
        plaintext="hello human",
        encrypted=True,
        rule=SealRule(TrustBook(), opened.request),  # the key that wrote it
    )
    assert human.decrypt(AGENT_NAME, sealed.payload) == b"hello human"
    assert sealed.history_record is not None
    assert sealed.history_record["key_id"] == "hk-1"
    assert sealed.data.signal != data.signal  # the sending chain moved on

    # A different history key for the same conversation is refused; the data stays.
    wrapper["history_key"] = {
        "key_id": "hk-2",
        "epoch": 1,
        "raw_key_b64": base64.b64encode(bytes(range(32))).decode(),
    }
    second = _message(human.encrypt(AGENT_NAME, json.dumps(wrapper).encode()), message_id="m-2")
    after, [refused] = _open(sealed.data, second)
    assert "history key changed" in (refused.refusal or "")
    assert after.conversations.history_keys[CONVERSATION].key_id == "hk-1"
