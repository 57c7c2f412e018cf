"""Wire formats: real messages of two native libsignal peers parse, re-encode and bound-check."""

import pytest

from custom_components.pacerelle.client.signal.consts import MAX_FRAME_LENGTH
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.wire import (
    FrameType,
    PreKeySignalMessage,
    SignalMessage,
    compute_mac,
    parse_frame,
)
from custom_components.pacerelle.client.signal.wire.protobuf import (
    bytes_field,
    encode_bytes,
    encode_uint32,
    parse,
    read_varint,
    uint32_field,
    write_varint,
)
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

AGENT, HUMAN = "agent:a1", "human:u1:c1:device:1"
needs_peer = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")


@pytest.fixture(scope="module")
def native_frames() -> tuple[bytes, bytes, bytes]:
    """A human's first PreKey frame, the agent's reply, and the human's next frame."""
    agent, human = ReferencePeer(AGENT), ReferencePeer(HUMAN)
    human.process_prekey_bundle(AGENT, agent.generate_prekey_bundle(11, 22, 22))
    first = human.encrypt(AGENT, b"hello")
    agent.decrypt(HUMAN, first)
    reply = agent.encrypt(HUMAN, b"reply")
    human.decrypt(AGENT, reply)
    return first, reply, human.encrypt(AGENT, b"next")


@needs_peer
def test_native_prekey_message_parses_and_reencodes(native_frames: tuple[bytes, ...]) -> None:
    first = native_frames[0]
    assert first[0] == FrameType.PRE_KEY_SIGNAL_MESSAGE
    message = parse_frame(first)
    assert isinstance(message, PreKeySignalMessage)
    assert (message.pre_key_id, message.signed_pre_key_id, message.kyber_pre_key_id) == (11, 22, 22)
    assert first[1] == 0x44
    assert len(message.kyber_ciphertext) == 1569
    assert message.kyber_ciphertext[0] == 0x08
    assert message.message.counter == 0
    assert message.message.pq_ratchet[0] == 1  # SPQR v1
    assert message.encode() == first[1:]


@needs_peer
def test_native_signal_messages_parse(native_frames: tuple[bytes, ...]) -> None:
    for frame in native_frames[1:]:
        assert frame[0] == FrameType.SIGNAL_MESSAGE
        message = parse_frame(frame)
        assert isinstance(message, SignalMessage)
        assert message.serialized == frame[1:]
        assert message.addresses is None
        assert len(message.ciphertext) % 16 == 0


def test_signal_message_create_round_trips_and_macs() -> None:
    ours, theirs, mac_key = b"\x05" + b"a" * 32, b"\x05" + b"b" * 32, b"k" * 32
    message = SignalMessage.create(
        mac_key=mac_key,
        ratchet_key=b"\x05" + b"r" * 32,
        counter=300,
        previous_counter=7,
        ciphertext=b"c" * 32,
        pq_ratchet=b"\x01\x01\x01\x00",
        sender_identity=ours,
        receiver_identity=theirs,
    )
    parsed = SignalMessage.parse(message.serialized)
    assert parsed == message
    assert parsed.mac_is_valid(mac_key, ours, theirs)
    assert not parsed.mac_is_valid(mac_key, theirs, ours)
    assert message.serialized[-8:] == compute_mac(mac_key, ours, theirs, message.serialized[:-8])


def _signal_body(*fields: bytes) -> bytes:
    return b"\x44" + b"".join(fields) + bytes(8)


def test_signal_message_with_addresses_never_verifies() -> None:
    body = _signal_body(
        encode_bytes(1, b"\x05" + bytes(32)),
        encode_uint32(2, 0),
        encode_bytes(4, bytes(16)),
        encode_bytes(6, b"x" * 36),
    )
    message = SignalMessage.parse(body)
    mac = compute_mac(b"k" * 32, b"s", b"r", body[:-8])
    forged = SignalMessage.parse(body[:-8] + mac)
    assert message.addresses == b"x" * 36
    assert not forged.mac_is_valid(b"k" * 32, b"s", b"r")


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", SignalErrorKind.INVALID_MESSAGE),
        (b"\x44" + bytes(7), SignalErrorKind.INVALID_MESSAGE),
        (b"\x33" + bytes(8), SignalErrorKind.UNSUPPORTED_VERSION),
        (b"\x54" + bytes(8), SignalErrorKind.UNSUPPORTED_VERSION),
        (_signal_body(encode_uint32(2, 1), encode_bytes(4, b"c")), SignalErrorKind.INVALID_MESSAGE),
        (_signal_body(encode_bytes(1, b"\x05" + bytes(32)), encode_bytes(4, b"c")),
         SignalErrorKind.INVALID_MESSAGE),
        (_signal_body(encode_bytes(1, b"\x06" + bytes(32)), encode_uint32(2, 1),
                      encode_bytes(4, b"c")),
         SignalErrorKind.INVALID_KEY),
        (_signal_body(encode_bytes(1, b"\x05" + bytes(33))), SignalErrorKind.INVALID_MESSAGE),
        (_signal_body(b"\x0b"), SignalErrorKind.INVALID_MESSAGE),  # group wire type
        (_signal_body(b"\x0f"), SignalErrorKind.INVALID_MESSAGE),  # wire type 7
        (_signal_body(b"\x10" + b"\xff" * 10 + b"\x01"), SignalErrorKind.INVALID_MESSAGE),
        (_signal_body(b"\x10\x80\x80\x80\x80\x10"), SignalErrorKind.INVALID_MESSAGE),  # > 32 bits
        (_signal_body(b"\x22\x05ab"), SignalErrorKind.INVALID_MESSAGE),  # length past the end
        (_signal_body(b"\x0a\x21" + bytes(33)[:2] ), SignalErrorKind.INVALID_MESSAGE),
        (_signal_body(b"\x12\x01x"), SignalErrorKind.INVALID_MESSAGE),  # counter as bytes
        (_signal_body(b"\x00\x01"), SignalErrorKind.INVALID_MESSAGE),  # field number 0
    ],
)  # fmt: skip
def test_malformed_signal_messages_are_refused(data: bytes, kind: SignalErrorKind) -> None:
    with pytest.raises(SignalError) as caught:
        SignalMessage.parse(data)
    assert caught.value.kind == kind


def test_unknown_fields_are_skipped_and_last_duplicate_wins() -> None:
    body = _signal_body(
        encode_bytes(1, b"\x05" + bytes(32)),
        encode_uint32(2, 5),
        encode_uint32(2, 9),
        encode_uint32(99, 3),
        b"\x3d" + bytes(4),  # field 7, fixed32
        b"\x39" + bytes(8),  # field 7, fixed64
        encode_bytes(4, b"c" * 16),
    )
    message = SignalMessage.parse(body)
    assert message.counter == 9
    assert message.previous_counter == 0
    assert message.pq_ratchet == b""


def test_prekey_message_requires_kyber_and_identity() -> None:
    inner = SignalMessage.create(
        mac_key=bytes(32),
        ratchet_key=b"\x05" + bytes(32),
        counter=0,
        previous_counter=0,
        ciphertext=bytes(16),
        pq_ratchet=b"",
        sender_identity=b"",
        receiver_identity=b"",
    )
    complete = PreKeySignalMessage(
        registration_id=1,
        pre_key_id=None,
        signed_pre_key_id=2,
        kyber_pre_key_id=2,
        kyber_ciphertext=b"\x08" + bytes(1568),
        base_key=b"\x05" + bytes(32),
        identity_key=b"\x05" + bytes(32),
        message=inner,
        serialized=b"",
    )
    encoded = complete.encode()
    assert PreKeySignalMessage.parse(encoded).pre_key_id is None
    without_kyber = encoded[: encoded.index(encode_uint32(7, 2))]
    with pytest.raises(SignalError, match="Kyber prekey must be present"):
        PreKeySignalMessage.parse(without_kyber)
    with pytest.raises(SignalError, match="both or neither"):
        PreKeySignalMessage.parse(without_kyber + encode_uint32(7, 2))
    without_identity = encoded.replace(encode_bytes(3, b"\x05" + bytes(32)), b"")
    with pytest.raises(SignalError, match="missing identity key"):
        PreKeySignalMessage.parse(without_identity)


def test_frames_are_bounded_and_typed() -> None:
    with pytest.raises(SignalError) as caught:
        parse_frame(b"\x02" + bytes(MAX_FRAME_LENGTH))
    assert caught.value.kind == SignalErrorKind.LIMIT_EXCEEDED
    for frame in (b"", b"\x03\x44", b"\x00"):
        with pytest.raises(SignalError) as caught:
            parse_frame(frame)
        assert caught.value.kind == SignalErrorKind.INVALID_MESSAGE


def test_varints_round_trip_and_bytes_fields_are_bounded() -> None:
    for value in (0, 1, 127, 128, 300, 2**32 - 1, 2**64 - 1):
        assert read_varint(write_varint(value), 0) == (value, len(write_varint(value)))
    schema = {1: bytes_field(4), 2: uint32_field()}
    assert parse(encode_bytes(1, b"abcd") + encode_uint32(2, 7), schema) == {1: b"abcd", 2: 7}
    with pytest.raises(SignalError, match="over 4"):
        parse(encode_bytes(1, b"abcde"), schema)
