"""The erasure code as immutable steps: a message sent as chunks is rebuilt from enough of
them in any order, and taking a chunk in never changes the decoder it was given to."""

import random

from custom_components.pacerelle.client.signal.spqr.chunking import (
    add_chunk,
    decoded,
    next_chunk,
    start_receiving,
    start_sending,
)


def test_a_message_is_rebuilt_from_chunks_in_any_order() -> None:
    message = bytes(random.Random(3).randrange(256) for _ in range(100))
    encoder = start_sending(message)
    chunks = []
    for _ in range(8):
        encoder, chunk = next_chunk(encoder)
        chunks.append(chunk)
    random.Random(4).shuffle(chunks)
    decoder = start_receiving(len(message))
    for chunk in chunks:
        before = decoder
        decoder = add_chunk(decoder, chunk)
        if decoded(decoder) is not None:
            break
        assert decoded(before) is None
    assert decoded(decoder) == message


def test_an_encoder_step_leaves_the_encoder_it_was_given() -> None:
    encoder = start_sending(b"m" * 64)
    advanced, first = next_chunk(encoder)
    _, again = next_chunk(encoder)
    assert again == first
    _, second = next_chunk(advanced)
    assert second.index != first.index
