"""The SPQR V1 wire message: layout, varints and what spqr refuses."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.encoding import Chunk
from custom_components.pacerelle.client.signal.spqr.message import (
    BraidMessage,
    PayloadType,
    decode_message,
    decode_varint,
    encode_message,
    encode_varint,
)

DATA = bytes(range(32))


def test_varint_vectors_from_spqr() -> None:
    assert encode_varint(0x012C) == bytes([0xAC, 0x02])
    assert decode_varint(bytes([0xFF, 0xAC, 0x02, 0xFF]), 1) == (0x012C, 3)
    assert decode_varint(b"\x00", 0) == (0, 1)
    for value in (0, 1, 127, 128, 1 << 32, (1 << 64) - 1):
        encoded = encode_varint(value)
        assert decode_varint(encoded, 0) == (value, len(encoded))
    assert len(encode_varint((1 << 64) - 1)) == 10


def test_layout_of_each_payload_type() -> None:
    chunk = Chunk(300, DATA)
    assert encode_message(BraidMessage(1, PayloadType.HDR, chunk), 1) == (
        bytes([1, 1, 1, 1, 0xAC, 0x02]) + DATA
    )
    assert encode_message(BraidMessage(5, PayloadType.NONE), 200) == bytes([1, 5, 0xC8, 0x01, 0])
    assert encode_message(BraidMessage(2, PayloadType.CT1_ACK), 0) == bytes([1, 2, 0, 4])
    for payload in (PayloadType.EK, PayloadType.EK_CT1_ACK, PayloadType.CT1, PayloadType.CT2):
        message = BraidMessage(1 << 40, payload, Chunk(65535, DATA))
        wire = encode_message(message, (1 << 32) - 1)
        assert wire[0] == 1
        assert decode_message(wire) == (message, (1 << 32) - 1)


def test_trailing_bytes_are_ignored() -> None:
    message = BraidMessage(3, PayloadType.CT2, Chunk(7, DATA))
    assert decode_message(encode_message(message, 9) + b"future") == (message, 9)


@pytest.mark.parametrize(
    "wire",
    [
        b"",
        bytes([2, 1, 1, 0]),  # not V1
        bytes([1, 0, 1, 0]),  # epoch 0
        bytes([1, 1, 1]),  # no payload type
        bytes([1, 1, 1, 7]),  # unknown payload type
        bytes([1, 1, 0x80]),  # truncated varint
        bytes([1]) + b"\xff" * 10 + bytes([1, 0]),  # varint past 10 bytes
        bytes([1, 1]) + encode_varint(1 << 32) + bytes([0]),  # index past 32 bits
        bytes([1, 1, 1, 1, 0]) + DATA[:31],  # short chunk
        bytes([1, 1, 1, 1]) + encode_varint(65536) + DATA,  # chunk index past 16 bits
    ],
)
def test_malformed_messages_are_refused(wire: bytes) -> None:
    with pytest.raises(SignalError, match="message decode failed") as err:
        decode_message(wire)
    assert err.value.kind is SignalErrorKind.PQ_RATCHET
