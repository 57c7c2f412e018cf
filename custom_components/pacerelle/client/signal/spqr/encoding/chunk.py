"""The unit the erasure code sends: 32 bytes of code word under a 16-bit index."""

from dataclasses import dataclass

from .errors import EncodingError, EncodingErrorReason

CHUNK_DATA_SIZE = 32
# Bytes per GF(2^16) element; elements are big-endian in messages and chunks.
ELEMENT_SIZE = 2
# Each chunk carries one element of each of this many interleaved polynomials.
NUM_POLYS = CHUNK_DATA_SIZE // ELEMENT_SIZE
MAX_CHUNK_INDEX = 0xFFFF


@dataclass(frozen=True, slots=True)
class Chunk:
    """spqr's `Chunk`: element `index` of each of the 16 polynomials, big-endian."""

    index: int
    data: bytes

    def __post_init__(self) -> None:
        if type(self.index) is not int or not 0 <= self.index <= MAX_CHUNK_INDEX:
            raise EncodingError(
                EncodingErrorReason.CHUNK_INDEX,
                f"chunk index must be an int in [0, {MAX_CHUNK_INDEX}], got {self.index!r}",
            )
        if type(self.data) is not bytes or len(self.data) != CHUNK_DATA_SIZE:
            size = len(self.data) if isinstance(self.data, bytes | bytearray) else "?"
            got = f"{type(self.data).__name__} of length {size}"
            raise EncodingError(
                EncodingErrorReason.CHUNK_DATA,
                f"chunk data must be {CHUNK_DATA_SIZE} bytes, got {got}",
            )
