"""A chunk is a 16-bit index and exactly 32 bytes: anything else is refused as a malformed
message, with the reason spqr gives."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.encoding.chunk import (
    CHUNK_DATA_SIZE,
    MAX_CHUNK_INDEX,
    Chunk,
)
from custom_components.pacerelle.client.signal.spqr.encoding.errors import (
    EncodingError,
    EncodingErrorReason,
)


def test_the_bounds_are_accepted() -> None:
    assert Chunk(0, bytes(CHUNK_DATA_SIZE)).index == 0
    assert Chunk(MAX_CHUNK_INDEX, b"x" * CHUNK_DATA_SIZE).data == b"x" * CHUNK_DATA_SIZE


@pytest.mark.parametrize(
    ("index", "data", "reason"),
    [
        (-1, bytes(32), EncodingErrorReason.CHUNK_INDEX),
        (MAX_CHUNK_INDEX + 1, bytes(32), EncodingErrorReason.CHUNK_INDEX),
        (True, bytes(32), EncodingErrorReason.CHUNK_INDEX),
        (1, bytes(31), EncodingErrorReason.CHUNK_DATA),
        (1, bytes(33), EncodingErrorReason.CHUNK_DATA),
        (1, bytearray(32), EncodingErrorReason.CHUNK_DATA),
    ],
)
def test_other_chunks_are_refused(index: int, data: bytes, reason: EncodingErrorReason) -> None:
    with pytest.raises(EncodingError) as refused:
        Chunk(index, data)
    assert refused.value.reason is reason
    assert refused.value.kind is SignalErrorKind.INVALID_MESSAGE
