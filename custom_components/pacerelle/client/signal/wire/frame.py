"""Pacerelle's framing of a payload: one type byte, then the serialized libsignal message."""

from enum import IntEnum

from ..consts import MAX_FRAME_LENGTH
from ..errors import SignalError, SignalErrorKind
from .messages import PreKeySignalMessage, SignalMessage


class FrameType(IntEnum):
    """The first byte of a decoded `payload_b64` (PROTOCOL.md)."""

    PRE_KEY_SIGNAL_MESSAGE = 0x01
    SIGNAL_MESSAGE = 0x02


def parse_frame(frame: bytes) -> PreKeySignalMessage | SignalMessage:
    """The libsignal message inside a frame, parsed and bound-checked."""
    if len(frame) > MAX_FRAME_LENGTH:
        raise SignalError(SignalErrorKind.LIMIT_EXCEEDED, f"frame of {len(frame)} bytes")
    if not frame:
        raise SignalError(SignalErrorKind.INVALID_MESSAGE, "empty frame")
    match frame[0]:
        case FrameType.PRE_KEY_SIGNAL_MESSAGE:
            return PreKeySignalMessage.parse(frame[1:])
        case FrameType.SIGNAL_MESSAGE:
            return SignalMessage.parse(frame[1:])
        case other:
            raise SignalError(SignalErrorKind.INVALID_MESSAGE, f"unknown frame type {other:#04x}")


def frame_signal_message(message: SignalMessage) -> bytes:
    """The frame carrying one of our SignalMessages."""
    return _SIGNAL_MESSAGE_PREFIX + message.serialized


_SIGNAL_MESSAGE_PREFIX = bytes((FrameType.SIGNAL_MESSAGE,))
