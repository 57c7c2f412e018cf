"""The protobuf subset the wire messages use: varints round trip up to 64 bits and no
further, fields past the end or of the wrong wire type are refused, unknown ones skipped."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.wire.protobuf import (
    MAX_VARINT_BYTES,
    bytes_field,
    encode_bytes,
    encode_uint32,
    parse,
    read_varint,
    uint32_field,
    write_varint,
)

SCHEMA = {1: uint32_field(), 2: bytes_field(8)}


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**32 - 1, 2**63, 2**64 - 1])
def test_varints_round_trip(value: int) -> None:
    encoded = write_varint(value)
    assert read_varint(b"x" + encoded + b"y", 1) == (value, 1 + len(encoded))


@pytest.mark.parametrize(
    "data",
    [
        b"\x80",  # runs past the end
        b"\xff" * MAX_VARINT_BYTES + b"\x01",  # longer than 10 bytes
        b"\xff" * 9 + b"\x7f",  # 70 bits
    ],
)
def test_bad_varints_are_refused(data: bytes) -> None:
    with pytest.raises(SignalError) as refused:
        read_varint(data, 0)
    assert refused.value.kind is SignalErrorKind.INVALID_MESSAGE


def test_known_fields_are_read_and_unknown_ones_skipped() -> None:
    data = encode_uint32(1, 42) + encode_bytes(9, b"ignored") + encode_bytes(2, b"abc")
    assert parse(data, SCHEMA) == {1: 42, 2: b"abc"}


@pytest.mark.parametrize(
    "data",
    [
        encode_bytes(2, b"123456789"),  # over the field's bound
        encode_bytes(1, b"a"),  # a uint32 field sent as bytes
        encode_uint32(1, 2**32),  # over 32 bits
        encode_bytes(2, b"abc")[:-1],  # runs past the end
        encode_uint32(0, 1),  # field number 0
    ],
)
def test_malformed_fields_are_refused(data: bytes) -> None:
    with pytest.raises(SignalError) as refused:
        parse(data, SCHEMA)
    assert refused.value.kind is SignalErrorKind.INVALID_MESSAGE
