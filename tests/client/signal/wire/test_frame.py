"""A frame is one type byte, then a libsignal message: unknown types, empty and oversized
frames are refused before any parsing, and our SignalMessage's frame parses back to it."""

import pytest

from custom_components.pacerelle.client.signal.consts import MAX_FRAME_LENGTH
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.wire.frame import (
    FrameType,
    frame_signal_message,
    parse_frame,
)
from custom_components.pacerelle.client.signal.wire.messages import SignalMessage


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (b"", SignalErrorKind.INVALID_MESSAGE),
        (b"\x00abc", SignalErrorKind.INVALID_MESSAGE),
        (b"\x03abc", SignalErrorKind.INVALID_MESSAGE),
        (
            bytes((FrameType.SIGNAL_MESSAGE,)) + bytes(MAX_FRAME_LENGTH),
            SignalErrorKind.LIMIT_EXCEEDED,
        ),
    ],
)
def test_frames_refused_before_parsing(frame: bytes, kind: SignalErrorKind) -> None:
    with pytest.raises(SignalError) as refused:
        parse_frame(frame)
    assert refused.value.kind is kind


def test_a_signal_message_frame_parses_back_to_the_message() -> None:
    message = SignalMessage.create(
        mac_key=bytes(32),
        ratchet_key=b"\x05" + bytes(range(32)),
        counter=7,
        previous_counter=3,
        ciphertext=b"sealed bytes",
        pq_ratchet=b"",
        sender_identity=b"\x05" + bytes(32),
        receiver_identity=b"\x05" + bytes([1]) * 32,
    )
    frame = frame_signal_message(message)
    assert frame[0] == FrameType.SIGNAL_MESSAGE
    parsed = parse_frame(frame)
    assert isinstance(parsed, SignalMessage)
    assert parsed == message
    assert parsed.counter == 7
    assert parsed.ciphertext == b"sealed bytes"
