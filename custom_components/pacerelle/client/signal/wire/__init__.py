"""Wire formats: Pacerelle's frame, libsignal's messages, and the protobuf they are made of."""

from .frame import FrameType, frame_signal_message, parse_frame
from .messages import PreKeySignalMessage, SignalMessage, compute_mac

__all__ = [
    "FrameType",
    "PreKeySignalMessage",
    "SignalMessage",
    "compute_mac",
    "frame_signal_message",
    "parse_frame",
]
