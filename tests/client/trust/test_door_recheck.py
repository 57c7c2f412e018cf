"""The flush's decision (client/trust/door.py `recheck`): a queued send goes out only if the
key it was sealed for is still allowed, on the book as it is at the flush.

Pure: the rule, a queued send and the held group keys and epochs, no relay (the flush through the
emulator is tests/client/trust/test_door_attacks.py)."""

import json

from custom_components.pacerelle.client.errors import SendRefusal
from custom_components.pacerelle.client.trust.door import SealRule, recheck
from custom_components.pacerelle.client.values.agent_data import Conversations
from custom_components.pacerelle.client.values.group_epochs import GroupEpoch
from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.send_queue import QueuedSend
from custom_components.pacerelle.client.values.trust_book import DeviceTrust, TrustBook, TrustState

OWNER, ANA = "u-owner", "u-ana"
PHONE, OTHER = b"\x05" + bytes(32), b"\x05" + bytes([1]) * 32
NONE = Conversations()


def book(*devices: tuple[str, str, bytes, TrustState]) -> TrustBook:
    return TrustBook({f"{p}|{d}": DeviceTrust(p, d, k, s) for p, d, k, s in devices})


def queued(**fields: object) -> QueuedSend:
    frame = json.dumps({"to": OWNER, "to_device_id": "1", "payload": "sealed"})
    return QueuedSend("m-1", "c-1", frame, 0.0, 60.0, **fields)  # type: ignore[arg-type]


def no_session(_person: str, _device: str) -> bytes | None:
    return None


def test_a_direct_send_goes_only_while_its_key_is_trusted() -> None:
    send = queued(to=OWNER, device_id="1", identity_key=PHONE)
    trusted = SealRule(book((OWNER, "1", PHONE, TrustState.TRUSTED)))
    assert recheck(trusted, send, NONE, no_session) is None
    blocked = SealRule(book((OWNER, "1", PHONE, TrustState.BLOCKED)))
    assert recheck(blocked, send, NONE, no_session) is SendRefusal.BLOCKED_DEVICE
    # Blocked under another device id: the key is blocked.
    elsewhere = SealRule(
        book((OWNER, "1", PHONE, TrustState.TRUSTED), (OWNER, "3", PHONE, TrustState.BLOCKED))
    )
    assert recheck(elsewhere, send, NONE, no_session) is SendRefusal.BLOCKED_DEVICE
    changed = SealRule(book((OWNER, "1", OTHER, TrustState.TRUSTED)))
    assert recheck(changed, send, NONE, no_session) is SendRefusal.UNTRUSTED_DEVICE


def test_an_answer_may_go_to_the_unverified_key_that_asked_never_a_blocked_one() -> None:
    send = queued(to=ANA, device_id="2", identity_key=PHONE, answers="r-1")
    unverified = SealRule(book((ANA, "2", PHONE, TrustState.UNVERIFIED)))
    assert recheck(unverified, send, NONE, no_session) is None
    blocked = SealRule(book((ANA, "2", PHONE, TrustState.BLOCKED)))
    assert recheck(blocked, send, NONE, no_session) is SendRefusal.BLOCKED_DEVICE


def test_a_send_queued_before_recipients_were_kept_is_judged_by_its_frame() -> None:
    legacy = queued()  # no recipient recorded: the frame's, and the session's key now
    rule = SealRule(book((OWNER, "1", PHONE, TrustState.TRUSTED)))
    assert recheck(rule, legacy, NONE, lambda person, device: PHONE) is None
    assert recheck(rule, legacy, NONE, lambda person, device: OTHER) is (
        SendRefusal.UNTRUSTED_DEVICE
    )
    assert recheck(rule, legacy, NONE, no_session) is SendRefusal.UNTRUSTED_DEVICE
    # A frame that names no person (unreadable, or a group's) is left as it was sealed.
    for frame in ("not json", "[1]", json.dumps({"to": "group:c-1"})):
        odd = QueuedSend("m-2", "c-1", frame, 0.0, 60.0)
        assert recheck(rule, odd, NONE, no_session) is None


def test_a_group_send_goes_only_while_its_key_is_one_a_message_would_be_trusted_from() -> None:
    key = GroupKey("c-1", "k-ana", 1, bytes(32), ANA, "1", PHONE)
    held = Conversations(group_keys={key.name: key})
    send = queued(to="group:c-1", group_key=key.name)
    trusted = SealRule(book((ANA, "1", PHONE, TrustState.TRUSTED)))
    assert recheck(trusted, send, held, no_session) is None
    blocked = SealRule(book((ANA, "1", PHONE, TrustState.BLOCKED)))
    assert recheck(blocked, send, held, no_session) is SendRefusal.NO_TRUSTED_DEVICE
    # The key evicted or gone since: nothing proves whom it was for.
    assert recheck(trusted, send, NONE, no_session) is SendRefusal.NO_TRUSTED_DEVICE


def test_a_group_send_goes_only_while_no_blocked_device_holds_a_key_of_its_epoch() -> None:
    ana = GroupKey("c-1", "k-ana", 2, bytes(32), ANA, "1", PHONE)
    ben = GroupKey("c-1", "k-ben", 2, bytes(32), "u-ben", "1", OTHER)
    old = GroupKey("c-1", "k-ben-1", 1, bytes(32), "u-ben", "1", OTHER)
    held = {k.name: k for k in (old, ana, ben)}
    send = queued(to="group:c-1", group_key=ana.name)
    trusted = (ANA, "1", PHONE, TrustState.TRUSTED)
    rule = SealRule(book(trusted, ("u-ben", "1", OTHER, TrustState.BLOCKED)))
    epoch = GroupEpoch(2, frozenset({(ANA, "1"), ("u-ben", "1")}))
    both = Conversations(group_keys=held, group_epochs={"c-1": epoch})
    assert recheck(rule, send, both, no_session) is SendRefusal.BLOCKED_GROUP_MEMBER
    # Ben was removed from epoch 2 (the key he sent for it counts for nothing): he does
    # not read what is sealed with Ana's key of it.
    removed = GroupEpoch(2, frozenset({(ANA, "1")}), frozenset({"u-ben"}))
    without = Conversations(group_keys=held, group_epochs={"c-1": removed})
    assert recheck(rule, send, without, no_session) is None
    # Only his key of epoch 1 is held: he holds none of epoch 2, what Ana's key seals.
    only_old = Conversations(group_keys={old.name: old, ana.name: ana})
    assert recheck(rule, send, only_old, no_session) is None
