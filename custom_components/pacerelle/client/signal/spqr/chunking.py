"""The erasure code seen as values: the braid's states never share a mutable coder.

spqr's states own their encoder and decoder and change them in place; ours are immutable, so
every step goes through the coders' copying methods.
"""

from .encoding import Chunk, PolyDecoder, PolyEncoder


def start_sending(message: bytes) -> PolyEncoder:
    """An encoder that yields `message` as an endless stream of 32-byte chunks."""
    return PolyEncoder.encode_bytes(message)


def next_chunk(encoder: PolyEncoder) -> tuple[PolyEncoder, Chunk]:
    """The next chunk to send, and the encoder after it."""
    chunk, advanced = encoder.with_next_chunk()
    return advanced, chunk


def start_receiving(length: int) -> PolyDecoder:
    """A decoder for a message of `length` bytes."""
    return PolyDecoder.new(length)


def add_chunk(decoder: PolyDecoder, chunk: Chunk) -> PolyDecoder:
    """The decoder after taking in `chunk`."""
    return decoder.with_chunk(chunk)


def decoded(decoder: PolyDecoder) -> bytes | None:
    """The whole message once enough chunks have arrived."""
    return decoder.decoded_message()
