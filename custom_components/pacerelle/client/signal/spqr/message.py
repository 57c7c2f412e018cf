"""The SPQR V1 message as it travels in SignalMessage.pq_ratchet (v1/chunked/states/serialize.rs).

    version      1 byte, 1 for V1
    epoch        varint (1..10 bytes), never 0
    index        varint, the message key's index in the sending chain (0 when there is none)
    payload type 1 byte, PayloadType
    chunk        for the types that carry one: varint chunk index (< 2**16), then 32 bytes

Trailing bytes after the payload are ignored, as spqr allows, so a later version can extend it.
"""

from dataclasses import dataclass
from enum import IntEnum

from ..errors import SignalError, SignalErrorKind
from .encoding import Chunk
from .params import UINT32_MAX, UINT64_MAX, Version

MAX_VARINT_BYTES = 10
CHUNK_DATA_SIZE = 32
MAX_CHUNK_INDEX = 0xFFFF


class PayloadType(IntEnum):
    """What a message carries for the ML-KEM exchange."""

    NONE = 0
    HDR = 1
    EK = 2
    EK_CT1_ACK = 3
    CT1_ACK = 4
    CT1 = 5
    CT2 = 6


CHUNKED_TYPES = frozenset(
    {PayloadType.HDR, PayloadType.EK, PayloadType.EK_CT1_ACK, PayloadType.CT1, PayloadType.CT2}
)

# Encoding runs for every message: one-byte parts prepared once, joined in one expression.
_PAYLOAD_BYTES = {payload: bytes((payload,)) for payload in PayloadType}
_V1_BYTE = bytes((Version.V1,))


@dataclass(frozen=True, slots=True)
class BraidMessage:
    """The ML-KEM exchange part of a message: its epoch and at most one chunk."""

    epoch: int
    payload: PayloadType
    chunk: Chunk | None = None


def _decode_error(detail: str) -> SignalError:
    return SignalError(SignalErrorKind.PQ_RATCHET, f"message decode failed: {detail}")


def encode_varint(value: int) -> bytes:
    """LEB128, as protobuf writes an unsigned varint."""
    if 0 <= value < 0x80:  # epochs and chunk indexes mostly fit in one byte
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes, at: int) -> tuple[int, int]:
    """Read a varint at `at`; returns (value, position after it). Wraps past 64 bits as spqr."""
    value = 0
    for i in range(min(MAX_VARINT_BYTES, len(data) - at)):
        byte = data[at + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value & UINT64_MAX, at + i + 1
    raise _decode_error("truncated varint")


def encode_message(message: BraidMessage, index: int) -> bytes:
    """Serialize a message carrying the sending key's `index`."""
    payload, chunk = message.payload, message.chunk
    head = _V1_BYTE + encode_varint(message.epoch) + encode_varint(index)
    if payload not in CHUNKED_TYPES:
        return head + _PAYLOAD_BYTES[payload]
    if chunk is None:
        raise ValueError(f"{payload.name} message without a chunk")
    return head + _PAYLOAD_BYTES[payload] + encode_varint(chunk.index) + chunk.data


def decode_message(data: bytes) -> tuple[BraidMessage, int]:
    """Parse a V1 message; returns it with the sender's key index."""
    if not data or data[0] != Version.V1:
        raise _decode_error("not a V1 message")
    epoch, at = decode_varint(data, 1)
    if epoch == 0:
        raise _decode_error("epoch 0")
    index, at = decode_varint(data, at)
    if index > UINT32_MAX:
        raise _decode_error("key index past 32 bits")
    if at >= len(data):
        raise _decode_error("no payload type")
    try:
        payload = PayloadType(data[at])
    except ValueError:
        raise _decode_error(f"unknown payload type {data[at]}") from None
    at += 1
    chunk = None
    if payload in CHUNKED_TYPES:
        chunk_index, at = decode_varint(data, at)
        if at + CHUNK_DATA_SIZE > len(data) or chunk_index > MAX_CHUNK_INDEX:
            raise _decode_error("bad chunk")
        chunk = Chunk(chunk_index, data[at : at + CHUNK_DATA_SIZE])
    return BraidMessage(epoch, payload, chunk), index
