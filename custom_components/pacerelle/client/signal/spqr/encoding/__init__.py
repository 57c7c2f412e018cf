"""spqr's erasure code: a value split into 32-byte chunks, rebuilt from any enough of them."""

from .chunk import CHUNK_DATA_SIZE, MAX_CHUNK_INDEX, NUM_POLYS, Chunk
from .errors import EncodingError, EncodingErrorReason
from .polynomial import COUNTER_MODULUS, MAX_MESSAGE_LEN, PolyDecoder, PolyEncoder

__all__ = [
    "CHUNK_DATA_SIZE",
    "COUNTER_MODULUS",
    "MAX_CHUNK_INDEX",
    "MAX_MESSAGE_LEN",
    "NUM_POLYS",
    "Chunk",
    "EncodingError",
    "EncodingErrorReason",
    "PolyDecoder",
    "PolyEncoder",
]
