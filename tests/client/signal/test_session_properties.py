"""Property tests: tampered, truncated, replayed and forged frames are refused, state unchanged."""

import json
import os
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.signal.wire import (
    PreKeySignalMessage,
    SignalMessage,
    frame_signal_message,
    parse_frame,
)
from custom_components.pacerelle.client.signal.wire.protobuf import encode_bytes, encode_uint32
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")

PEER = PeerAddress("user-1", "conv-1", 1)
NEWCOMER = PeerAddress("user-2", "conv-2", 1)
# Kinds a mangled frame may legitimately produce; never NO_SESSION or INVALID_STATE.
REFUSALS = {
    SignalErrorKind.INVALID_MESSAGE,
    SignalErrorKind.INVALID_MAC,
    SignalErrorKind.INVALID_KEY,
    SignalErrorKind.UNSUPPORTED_VERSION,
    SignalErrorKind.DUPLICATE_MESSAGE,
    SignalErrorKind.LIMIT_EXCEEDED,
    SignalErrorKind.PQ_RATCHET,
    SignalErrorKind.UNKNOWN_PREKEY,
    SignalErrorKind.UNTRUSTED_IDENTITY,
}
SETTINGS = settings(
    max_examples=int(os.environ.get("SIGNAL_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@dataclass(frozen=True)
class Scene:
    """A state with one live session, a pending SignalMessage and a pending PreKey message."""

    state: AgentSignalState
    snapshot: str
    signal_frame: bytes
    prekey_frame: bytes


@cache
def scene() -> Scene:
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    newcomer = ReferencePeer("newcomer")
    newcomer.process_prekey_bundle(AGENT_NAME, agent.bundle())
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"hello"))
    for index in range(3):  # a few round trips so SPQR has moved on
        state, reply = encrypt(state, PEER, b"reply %d" % index)
        human.decrypt(AGENT_NAME, reply)
        state, _ = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"ping %d" % index))
    return Scene(
        state=state,
        snapshot=json.dumps(state.to_json(), sort_keys=True),
        signal_frame=human.encrypt(AGENT_NAME, b"the real message"),
        prekey_frame=newcomer.encrypt(AGENT_NAME, b"newcomer's first"),
    )


def _refused(frame: bytes, peer: PeerAddress = PEER) -> SignalErrorKind:
    """Decrypting `frame` fails; the state is unchanged and the real frames still decrypt."""
    s = scene()
    with pytest.raises(SignalError) as caught:
        decrypt(s.state, peer, frame)
    assert json.dumps(s.state.to_json(), sort_keys=True) == s.snapshot
    return caught.value.kind


def test_the_untampered_frames_decrypt() -> None:
    s = scene()
    assert decrypt(s.state, PEER, s.signal_frame)[1] == b"the real message"
    assert decrypt(s.state, NEWCOMER, s.prekey_frame)[1] == b"newcomer's first"


@SETTINGS
@given(data=st.data(), prekey=st.booleans())
def test_tampered_frames_are_refused(data: st.DataObject, prekey: bool) -> None:
    s = scene()
    frame, peer = (s.prekey_frame, NEWCOMER) if prekey else (s.signal_frame, PEER)
    position = data.draw(st.integers(0, len(frame) - 1))
    mask = data.draw(st.integers(1, 255))
    tampered = frame[:position] + bytes([frame[position] ^ mask]) + frame[position + 1 :]
    if prekey and _unauthenticated_change(frame, tampered):
        return
    assert _refused(tampered, peer) in REFUSALS


def _unauthenticated_change(frame: bytes, tampered: bytes) -> bool:
    """Whether the change only touches what libsignal leaves unauthenticated in a PreKey message.

    The low nibble of the version byte is ignored, and the registration id is only recorded;
    such a message must still decrypt to the original plaintext.
    """
    original = parse_frame(frame)
    try:
        changed = parse_frame(tampered)
    except SignalError:
        return False
    if not isinstance(changed, PreKeySignalMessage) or not isinstance(
        original, PreKeySignalMessage
    ):
        return False
    if replace(changed, registration_id=0, serialized=b"") != replace(
        original, registration_id=0, serialized=b""
    ):
        return False
    assert decrypt(scene().state, NEWCOMER, tampered)[1] == b"newcomer's first"
    return True


@SETTINGS
@given(data=st.data())
def test_tampered_mac_or_ciphertext_is_an_invalid_mac(data: st.DataObject) -> None:
    frame = scene().signal_frame
    message = parse_frame(frame)
    assert isinstance(message, SignalMessage)
    start = frame.index(message.ciphertext)
    region = list(range(start, start + len(message.ciphertext))) + list(
        range(len(frame) - 8, len(frame))
    )
    position = data.draw(st.sampled_from(region))
    tampered = frame[:position] + bytes([frame[position] ^ data.draw(st.integers(1, 255))])
    tampered += frame[position + 1 :]
    assert _refused(tampered) == SignalErrorKind.INVALID_MAC


@SETTINGS
@given(data=st.data(), prekey=st.booleans())
def test_truncated_frames_are_refused(data: st.DataObject, prekey: bool) -> None:
    s = scene()
    frame, peer = (s.prekey_frame, NEWCOMER) if prekey else (s.signal_frame, PEER)
    length = data.draw(st.integers(0, len(frame) - 1))
    # A cut inside pq_ratchet can reach SPQR, which reads its part before the MAC is checked.
    assert _refused(frame[:length], peer) in {
        SignalErrorKind.INVALID_MESSAGE,
        SignalErrorKind.INVALID_MAC,
        SignalErrorKind.PQ_RATCHET,
    }


@SETTINGS
@given(
    counter=st.integers(0, 2**32 - 1), mac_key=st.binary(min_size=32, max_size=32), body=st.binary()
)
def test_forged_messages_are_refused(counter: int, mac_key: bytes, body: bytes) -> None:
    real = parse_frame(scene().signal_frame)
    assert isinstance(real, SignalMessage)
    forged = SignalMessage.create(
        mac_key=mac_key,
        ratchet_key=real.ratchet_key,
        counter=counter,
        previous_counter=real.previous_counter,
        ciphertext=body,
        pq_ratchet=real.pq_ratchet,
        sender_identity=os.urandom(33),
        receiver_identity=os.urandom(33),
    )
    kind = _refused(frame_signal_message(forged))
    if counter == real.counter:
        assert kind == SignalErrorKind.INVALID_MAC
    else:
        assert kind in {
            SignalErrorKind.INVALID_MAC,
            SignalErrorKind.DUPLICATE_MESSAGE,
            SignalErrorKind.LIMIT_EXCEEDED,
            SignalErrorKind.PQ_RATCHET,
        }


def test_replays_are_duplicates_and_change_nothing() -> None:
    s = scene()
    state, _ = decrypt(s.state, PEER, s.signal_frame)
    snapshot = json.dumps(state.to_json(), sort_keys=True)
    for frame, peer in ((s.signal_frame, PEER),):
        with pytest.raises(SignalError) as caught:
            decrypt(state, peer, frame)
        assert caught.value.kind == SignalErrorKind.DUPLICATE_MESSAGE
    state, _ = decrypt(state, NEWCOMER, s.prekey_frame)
    with pytest.raises(SignalError) as caught:
        decrypt(state, NEWCOMER, s.prekey_frame)
    assert caught.value.kind == SignalErrorKind.DUPLICATE_MESSAGE
    message = parse_frame(s.prekey_frame)
    assert isinstance(message, PreKeySignalMessage)
    assert json.dumps(state.to_json(), sort_keys=True) != snapshot


KEYS = st.one_of(
    st.binary(min_size=33, max_size=33).map(lambda key: b"\x05" + key[1:]),
    st.binary(max_size=40),
)


@SETTINGS
@given(
    fields=st.lists(
        st.tuples(st.integers(1, 9), st.one_of(st.integers(0, 2**32 - 1), KEYS)), max_size=12
    ),
    prekey=st.booleans(),
)
def test_arbitrary_structured_frames_only_raise_signal_errors(
    fields: list[tuple[int, int | bytes]], prekey: bool
) -> None:
    body = b"".join(
        encode_uint32(number, value) if isinstance(value, int) else encode_bytes(number, value)
        for number, value in fields
    )
    frame = bytes([1 if prekey else 2, 0x44]) + body + (b"" if prekey else os.urandom(8))
    assert _refused(frame, NEWCOMER if prekey else PEER) in REFUSALS | {SignalErrorKind.NO_SESSION}


def _prekey_frame_with(**changes: Any) -> bytes:
    original = parse_frame(scene().prekey_frame)
    assert isinstance(original, PreKeySignalMessage)
    return b"\x01" + replace(original, **changes).encode()


def test_forged_prekey_material_is_refused_precisely() -> None:
    random_kyber = b"\x08" + os.urandom(1568)
    assert _refused(_prekey_frame_with(kyber_ciphertext=random_kyber), NEWCOMER) == (
        SignalErrorKind.INVALID_MAC
    )
    other_base_key = curve.serialize_public(curve.KeyPair.generate().public)
    assert _refused(_prekey_frame_with(base_key=other_base_key), NEWCOMER) == (
        SignalErrorKind.INVALID_MAC
    )
    small_order = b"\x05" + bytes(32)
    assert _refused(_prekey_frame_with(base_key=small_order), NEWCOMER) == (
        SignalErrorKind.INVALID_KEY
    )
    other_identity = curve.serialize_public(curve.KeyPair.generate().public)
    assert _refused(_prekey_frame_with(identity_key=other_identity), NEWCOMER) == (
        SignalErrorKind.INVALID_MAC
    )
    assert _refused(_prekey_frame_with(signed_pre_key_id=12345), NEWCOMER) == (
        SignalErrorKind.UNKNOWN_PREKEY
    )
    assert _refused(_prekey_frame_with(kyber_ciphertext=b"\x07" + os.urandom(1568)), NEWCOMER) == (
        SignalErrorKind.INVALID_MESSAGE
    )


@SETTINGS
@given(pq_ratchet=st.binary(max_size=80).map(lambda data: b"\x01" + data))
def test_forged_pq_ratchet_parts_are_refused(pq_ratchet: bytes) -> None:
    real = parse_frame(scene().signal_frame)
    assert isinstance(real, SignalMessage)
    forged = SignalMessage.create(
        mac_key=bytes(32),
        ratchet_key=real.ratchet_key,
        counter=real.counter,
        previous_counter=real.previous_counter,
        ciphertext=real.ciphertext,
        pq_ratchet=pq_ratchet,
        sender_identity=bytes(33),
        receiver_identity=bytes(33),
    )
    assert _refused(frame_signal_message(forged)) in {
        SignalErrorKind.PQ_RATCHET,
        SignalErrorKind.INVALID_MAC,
    }
