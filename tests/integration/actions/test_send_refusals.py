"""The stored forms of what the trust door added (a request's judgement, a queued send's
recipient) load from stores without them. Each refusal's translations:
tests/integration/test_errors.py."""

from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.send_queue import QueuedSend
from custom_components.pacerelle.client.values.trust_book import TrustState


def test_a_request_stored_before_judgements_loads_unverified() -> None:
    old = {
        "message_id": "m1",
        "conversation_id": "c1",
        "sender_id": "u1",
        "sender_device_id": "2",
        "to": "a1",
        "encrypted": True,
        "kind": "text",
        "text": "hi",
        "reply_to_message_id": None,
        "received_at": 1.0,
    }
    request = Request.from_json(old)
    assert (request.sender_identity, request.trust_state) == (None, None)
    assert (request.judged.state, request.judged.device_id) == (TrustState.UNVERIFIED, "2")
    assert not request.judged.trusted
    judged = Request.from_json(
        {**old, "sender_identity": "05" * 33, "trust_device_id": "1", "trust_state": "trusted"}
    )
    assert Request.from_json(judged.to_json()) == judged
    assert (judged.judged.device_id, judged.judged.trusted) == ("1", True)


def test_a_queued_send_stored_before_recipients_loads_without_them() -> None:
    old = {
        "message_id": "r1",
        "conversation_id": "c1",
        "frame": "{}",
        "queued_at": 1.0,
        "expires_at": 2.0,
        "attempted": False,
    }
    send = QueuedSend.from_json(old)
    assert (send.to, send.device_id, send.identity_key, send.answers) == (None, None, None, None)
    recorded = QueuedSend.from_json(
        {**old, "to": "u1", "device_id": "1", "identity_key": "05" * 33, "answers": "m1"}
    )
    assert QueuedSend.from_json(recorded.to_json()) == recorded
