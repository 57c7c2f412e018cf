"""Sessions through the engine's API, against the native peer: set-up, prekeys, archives, JSON."""

import json
from dataclasses import replace

import pytest

from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.consts import (
    ARCHIVED_STATE_MAX_FORWARD_JUMPS,
    ARCHIVED_STATES_MAX_LENGTH,
    MAX_MESSAGE_KEYS,
)
from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.pqxdh import is_canonical_public_key
from custom_components.pacerelle.client.signal.session import PeerAddress, SessionRecord
from custom_components.pacerelle.client.signal.state import AgentSignalState
from tests.client.signal.interop import AGENT_NAME, Agent, native_bundle
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")

PEER = PeerAddress("user-1", "conv-1", 1)


def _human(agent: Agent, name: str = "human") -> ReferencePeer:
    human = ReferencePeer(name)
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    return human


def _kind(call: object) -> SignalErrorKind:
    assert callable(call)
    with pytest.raises(SignalError) as caught:
        call()
    return caught.value.kind


def test_peer_storage_name_matches_the_sdk() -> None:
    assert PEER.storage_name == "human:user-1:conv-1:device:1"


def test_first_message_starts_a_session_and_uses_up_the_one_time_prekey() -> None:
    agent = Agent()
    bundle = agent.bundle()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, bundle)
    before = agent.state
    state, plaintext = decrypt(before, PEER, human.encrypt(AGENT_NAME, b"hello"))
    assert plaintext == b"hello"
    assert before.record(PEER) == SessionRecord()  # the input state is untouched
    ids = {p.prekey_id for p in state.prekeys.one_time_prekeys}
    assert bundle.prekey_id not in ids
    assert bundle.prekey_id in {p.prekey_id for p in before.prekeys.one_time_prekeys}
    # Someone else presenting the same one-time prekey is refused.
    other = ReferencePeer("other")
    other.process_prekey_bundle(AGENT_NAME, bundle)
    other_peer = PeerAddress("user-2", "conv-2", 1)
    message = other.encrypt(AGENT_NAME, b"reuse")
    assert _kind(lambda: decrypt(state, other_peer, message)) == SignalErrorKind.UNKNOWN_PREKEY
    # Until we reply, every message is a PreKey message; all of them decrypt.
    state, second = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"again"))
    assert second == b"again"
    state, frame = encrypt(state, PEER, b"reply")
    assert frame[0] == 0x02
    assert human.decrypt(AGENT_NAME, frame) == b"reply"
    assert human.encrypt(AGENT_NAME, b"now plain")[0] == 0x02


def test_prekeys_in_grace_still_start_sessions() -> None:
    agent = Agent()
    human = _human(agent)
    agent.state = agent.state.with_prekeys(agent.state.prekeys.rotate(now=2_000_000_000))
    state, plaintext = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"late"))
    assert plaintext == b"late"
    assert state.record(PEER).current is not None


def test_unknown_signed_prekey_and_missing_session() -> None:
    agent = Agent()
    human = _human(agent)
    first = human.encrypt(AGENT_NAME, b"x")
    prekeys = agent.state.prekeys
    forgotten = replace(prekeys, signed_prekey=replace(prekeys.signed_prekey, prekey_id=999))
    lost = agent.state.with_prekeys(forgotten)
    assert _kind(lambda: decrypt(lost, PEER, first)) == SignalErrorKind.UNKNOWN_PREKEY
    assert _kind(lambda: encrypt(agent.state, PEER, b"x")) == SignalErrorKind.NO_SESSION
    state, _ = decrypt(agent.state, PEER, first)
    state, reply = encrypt(state, PEER, b"r")
    human.decrypt(AGENT_NAME, reply)
    plain = human.encrypt(AGENT_NAME, b"plain")
    stranger = PeerAddress("user-9", "conv-1", 1)
    assert _kind(lambda: decrypt(state, stranger, plain)) == SignalErrorKind.NO_SESSION


def test_changed_identity_is_refused_like_the_native_runtime() -> None:
    agent = Agent()
    state, _ = decrypt(agent.state, PEER, _human(agent).encrypt(AGENT_NAME, b"first"))
    impostor = _human(agent, "impostor")
    message = impostor.encrypt(AGENT_NAME, b"me too")
    assert _kind(lambda: decrypt(state, PEER, message)) == SignalErrorKind.UNTRUSTED_IDENTITY


def test_new_session_archives_the_old_one_which_still_decrypts() -> None:
    agent = Agent()
    human = _human(agent)
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"one"))
    state, reply = encrypt(state, PEER, b"r1")
    human.decrypt(AGENT_NAME, reply)
    late = human.encrypt(AGENT_NAME, b"sent on the old session")
    human.process_prekey_bundle(AGENT_NAME, native_bundle(state.prekeys, _unused_id(state)))
    state, plaintext = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"new session"))
    assert plaintext == b"new session"
    record = state.record(PEER)
    assert len(record.previous) == 1
    new_base_key = record.current.alice_base_key if record.current else b""
    state, plaintext = decrypt(state, PEER, late)
    assert plaintext == b"sent on the old session"
    promoted = state.record(PEER)
    assert promoted.current is not None
    assert promoted.current.alice_base_key != new_base_key  # the old session is current again
    assert promoted.previous[0].alice_base_key == new_base_key


@pytest.mark.parametrize(
    ("skipped", "accepted"),
    [(ARCHIVED_STATE_MAX_FORWARD_JUMPS - 1, True), (ARCHIVED_STATE_MAX_FORWARD_JUMPS + 1, False)],
)
def test_archived_sessions_jump_a_bounded_distance(skipped: int, accepted: bool) -> None:
    """A late message far ahead in an archived session is refused: forged ones cost too much."""
    agent = Agent()
    human = _human(agent)
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"one"))
    state, reply = encrypt(state, PEER, b"r1")
    human.decrypt(AGENT_NAME, reply)  # the human's next messages are plain SignalMessages
    for _ in range(skipped):
        human.encrypt(AGENT_NAME, b"never delivered")
    late = human.encrypt(AGENT_NAME, b"far ahead on the old session")
    human.process_prekey_bundle(AGENT_NAME, native_bundle(state.prekeys, _unused_id(state)))
    state, _ = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"new session"))
    before = state.to_json()
    if accepted:
        state, plaintext = decrypt(state, PEER, late)
        assert plaintext == b"far ahead on the old session"
    else:
        with pytest.raises(SignalError):
            decrypt(state, PEER, late)
        assert state.to_json() == before


def _unused_id(state: AgentSignalState) -> int:
    return state.prekeys.one_time_prekeys[-1].prekey_id


def test_archive_is_capped_newest_first() -> None:
    agent = Agent()
    state, _ = decrypt(agent.state, PEER, _human(agent).encrypt(AGENT_NAME, b"x"))
    session = state.record(PEER).current
    assert session is not None
    record = SessionRecord()
    for index in range(ARCHIVED_STATES_MAX_LENGTH + 5):
        record = record.promote(replace(session, remote_registration_id=index))
    assert len(record.previous) == ARCHIVED_STATES_MAX_LENGTH
    assert record.current is not None
    assert record.current.remote_registration_id == ARCHIVED_STATES_MAX_LENGTH + 4
    assert record.previous[0].remote_registration_id == ARCHIVED_STATES_MAX_LENGTH + 3
    assert record.previous[-1].remote_registration_id == 4


def test_state_json_round_trips_and_refuses_garbage() -> None:
    agent = Agent()
    human = _human(agent)
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"x"))
    state, reply = encrypt(state, PEER, b"y")
    human.decrypt(AGENT_NAME, reply)
    data = json.loads(json.dumps(state.to_json()))
    reloaded = AgentSignalState.from_json(data)
    assert reloaded == state
    assert decrypt(reloaded, PEER, human.encrypt(AGENT_NAME, b"z"))[1] == b"z"
    broken = json.loads(json.dumps(data))
    broken["sessions"][PEER.storage_name]["current"]["ratchet"]["root_key"] = "AAAA"
    assert _kind(lambda: AgentSignalState.from_json(broken)) == SignalErrorKind.INVALID_STATE
    assert _kind(lambda: AgentSignalState.from_json({"format": 99})) == (
        SignalErrorKind.UNSUPPORTED_VERSION
    )
    assert _kind(lambda: AgentSignalState.from_json({})) == SignalErrorKind.INVALID_STATE


# Curve25519 points of small order (encodings from the X25519 blocklists).
LOW_ORDER_POINTS = [
    0,
    1,
    325606250916557431795983626356110631294008115727848805560023387167927233504,
    39382357235489614581723060781553021112529911719440698176882885853963445705823,
    2**255 - 20,
]


def test_base_key_must_be_canonical() -> None:
    for _ in range(5):
        assert is_canonical_public_key(curve.serialize_public(curve.KeyPair.generate().public))
    for u in LOW_ORDER_POINTS:
        assert not is_canonical_public_key(b"\x05" + u.to_bytes(32, "little"))
    unreduced = b"\x05" + (2**255 - 19 + 9).to_bytes(32, "little")
    assert not is_canonical_public_key(unreduced)
    top_bit = curve.serialize_public(curve.KeyPair.generate().public)
    assert not is_canonical_public_key(top_bit[:-1] + bytes([top_bit[-1] | 0x80]))
    # u = 2 lies on the twist, not on the curve.
    assert not is_canonical_public_key(b"\x05" + (2).to_bytes(32, "little"))


def _montgomery_y(u: int) -> int:
    """A square root of u^3 + A u^2 + u modulo p (p = 5 mod 8)."""
    p = 2**255 - 19
    rhs = (u**3 + 486662 * u * u + u) % p
    root = pow(rhs, (p + 3) // 8, p)
    if root * root % p != rhs:
        root = root * pow(2, (p - 1) // 4, p) % p
    assert root * root % p == rhs
    return root


def test_prime_order_point_plus_small_order_point_is_refused() -> None:
    p = 2**255 - 19
    u1 = int.from_bytes(curve.KeyPair.generate().public, "little")
    u2 = LOW_ORDER_POINTS[2]  # order 8
    v1, v2 = _montgomery_y(u1), _montgomery_y(u2)
    slope = (v2 - v1) * pow(u2 - u1, -1, p) % p
    u3 = (slope * slope - 486662 - u1 - u2) % p
    assert not is_canonical_public_key(b"\x05" + u3.to_bytes(32, "little"))


def test_skipped_keys_beyond_the_limit_are_gone_as_in_libsignal() -> None:
    agent = Agent()
    human = _human(agent)
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"start"))
    state, reply = encrypt(state, PEER, b"r")
    human.decrypt(AGENT_NAME, reply)
    frames = [human.encrypt(AGENT_NAME, b"m%d" % index) for index in range(MAX_MESSAGE_KEYS + 50)]
    state, last = decrypt(state, PEER, frames[-1])
    assert last == b"m%d" % (MAX_MESSAGE_KEYS + 49)
    # The 2000 newest skipped keys are kept (Double Ratchet and SPQR alike), older ones dropped.
    assert decrypt(state, PEER, frames[49])[1] == b"m49"
    assert _kind(lambda: decrypt(state, PEER, frames[48])) == SignalErrorKind.DUPLICATE_MESSAGE
    state, middle = decrypt(state, PEER, frames[1000])
    assert middle == b"m1000"
    assert _kind(lambda: decrypt(state, PEER, frames[1000])) == SignalErrorKind.DUPLICATE_MESSAGE


def test_prekey_message_of_an_archived_session_brings_it_back() -> None:
    agent = Agent()
    human = _human(agent)
    first_session = human.encrypt(AGENT_NAME, b"old session")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    second_session = human.encrypt(AGENT_NAME, b"new session")
    state, plaintext = decrypt(agent.state, PEER, second_session)
    assert plaintext == b"new session"
    state, plaintext = decrypt(state, PEER, first_session)
    assert plaintext == b"old session"
    record = state.record(PEER)
    assert len(record.previous) == 1
    state, plaintext = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"new again"))
    assert plaintext == b"new again"
    assert len(state.record(PEER).previous) == 1  # promoted back, nothing duplicated
    state, reply = encrypt(state, PEER, b"reply")
    assert human.decrypt(AGENT_NAME, reply) == b"reply"


def test_a_base_key_starts_a_session_only_once() -> None:
    """libsignal's mark_kyber_pre_key_used: a replay cannot start a session again, even with
    its one-time prekey restored and its session gone from the record."""
    agent = Agent()
    human = _human(agent)
    first = human.encrypt(AGENT_NAME, b"hello")
    before = agent.state
    after, _ = decrypt(before, PEER, first)
    marked = dict(after.base_keys_seen)
    assert sum(len(keys) for keys in marked.values()) == 1
    assert AgentSignalState.from_json(json.loads(json.dumps(after.to_json()))).base_keys_seen == (
        after.base_keys_seen
    )
    replayed = replace(after, prekeys=before.prekeys, sessions={})
    assert _kind(lambda: decrypt(replayed, PEER, first)) is SignalErrorKind.INVALID_MESSAGE
    # Without the mark, the same replay would have started a session.
    unmarked = replace(replayed, base_keys_seen={})
    assert decrypt(unmarked, PEER, first)[1] == b"hello"


def test_base_keys_are_forgotten_with_their_kyber_prekey() -> None:
    agent = Agent()
    state, _ = decrypt(agent.state, PEER, _human(agent).encrypt(AGENT_NAME, b"x"))
    assert state.base_keys_seen
    rotated = state.prekeys.rotate(now=10**10)
    assert state.with_prekeys(rotated).base_keys_seen  # the old pair is in its grace period
    expired = rotated.drop_expired(now=10**11)
    assert not state.with_prekeys(expired).base_keys_seen
