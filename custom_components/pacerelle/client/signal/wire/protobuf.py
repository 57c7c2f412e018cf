"""The small part of protobuf (proto2) that libsignal's messages use, read strictly and bounded.

Reading follows prost, the decoder libsignal uses, where it accepts input: fields may come in
any order, a repeated scalar field keeps its last value, unknown fields with a sound wire type
are skipped. It is stricter where no honest encoder goes: group wire types (3, 4, deprecated
and never used by libsignal), varints longer than 10 bytes or past 64 bits, and uint32 fields
holding more than 32 bits are refused, where prost would skip or silently truncate. Each known
field has a length bound checked before any copy.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from ..errors import SignalError, SignalErrorKind

MAX_VARINT_BYTES = 10
MAX_FIELD_NUMBER = (1 << 29) - 1
UINT32_MAX = (1 << 32) - 1


class WireType(IntEnum):
    """Protobuf wire types; 3 and 4 (groups) and 6, 7 are refused."""

    VARINT = 0
    FIXED64 = 1
    LENGTH_DELIMITED = 2
    FIXED32 = 5


@dataclass(frozen=True, slots=True)
class Field:
    """How one known field is read: a uint32, or bytes of at most `max_length`."""

    wire_type: WireType
    max_length: int = 0


def uint32_field() -> Field:
    """A proto2 `optional uint32`."""
    return Field(WireType.VARINT)


def bytes_field(max_length: int) -> Field:
    """A proto2 `optional bytes` of at most `max_length` bytes."""
    return Field(WireType.LENGTH_DELIMITED, max_length)


def _invalid(detail: str) -> SignalError:
    return SignalError(SignalErrorKind.INVALID_MESSAGE, f"protobuf: {detail}")


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """The varint at `offset` and the offset after it."""
    value = 0
    for index in range(MAX_VARINT_BYTES):
        if offset + index >= len(data):
            raise _invalid("varint runs past the end")
        byte = data[offset + index]
        value |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            if value >> 64:
                raise _invalid("varint exceeds 64 bits")
            return value, offset + index + 1
    raise _invalid("varint longer than 10 bytes")


def _read_value(data: bytes, offset: int, number: int, wire_type: int) -> tuple[int, int]:
    """One field's value and the offset after it; a length-delimited value is its start."""
    match wire_type:
        case WireType.VARINT:
            return read_varint(data, offset)
        case WireType.LENGTH_DELIMITED:
            length, offset = read_varint(data, offset)
            if length > len(data) - offset:
                raise _invalid(f"field {number} runs past the end")
            return offset, offset + length
        case WireType.FIXED64 | WireType.FIXED32:
            width = 8 if wire_type == WireType.FIXED64 else 4
            if width > len(data) - offset:
                raise _invalid(f"field {number} runs past the end")
            return 0, offset + width
        case _:
            raise _invalid(f"unsupported wire type {wire_type} (field {number})")


def parse(data: bytes, schema: Mapping[int, Field]) -> dict[int, int | bytes]:
    """The known fields of one message: field number to int (uint32) or bytes."""
    fields: dict[int, int | bytes] = {}
    offset = 0
    while offset < len(data):
        key, offset = read_varint(data, offset)
        number, wire_type = key >> 3, key & 0x7
        if number == 0 or number > MAX_FIELD_NUMBER:
            raise _invalid(f"invalid field number {number}")
        value, offset = _read_value(data, offset, number, wire_type)
        known = schema.get(number)
        if known is None:
            continue
        if known.wire_type != wire_type:
            raise _invalid(f"field {number} has wire type {wire_type}")
        if wire_type == WireType.VARINT:
            if value > UINT32_MAX:
                raise _invalid(f"field {number} exceeds 32 bits")
            fields[number] = value
        else:
            if offset - value > known.max_length:
                raise _invalid(f"field {number} is {offset - value} bytes, over {known.max_length}")
            fields[number] = data[value:offset]
    return fields


def write_varint(value: int) -> bytes:
    """The varint encoding of a non-negative integer below 2**64."""
    if value < 0x80:  # field keys, lengths and counters of a message: mostly one byte
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field_key(number: int, wire_type: WireType) -> bytes:
    """The encoded key (number and wire type) that starts a field."""
    return write_varint(number << 3 | wire_type)


def encode_uint32(number: int, value: int) -> bytes:
    """One uint32 field, key then varint."""
    return write_varint(number << 3 | WireType.VARINT) + write_varint(value)


def encode_bytes(number: int, value: bytes) -> bytes:
    """One bytes field, key, length, then the bytes."""
    return write_varint(number << 3 | WireType.LENGTH_DELIMITED) + write_varint(len(value)) + value
