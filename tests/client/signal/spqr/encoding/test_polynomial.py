"""spqr's erasure code (GF(2^16) polynomials): byte-identical to spqr v1.5.1.

The vectors in data/spqr_encoding/vectors.json come from spqr v1.5.1's own
encoding/gf.rs and encoding/polynomial.rs, compiled unchanged apart from their
formal-verification annotations, fed messages from the LCG below
(data/spqr_encoding/oracle/gen_vectors.py rebuilds them). The chunks libsignal
itself sends are checked against the reference peer.
"""

import base64
import hashlib
import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.encoding import (
    CHUNK_DATA_SIZE,
    COUNTER_MODULUS,
    MAX_MESSAGE_LEN,
    Chunk,
    EncodingError,
    EncodingErrorReason,
    PolyDecoder,
    PolyEncoder,
    gf,
    lagrange,
)
from custom_components.pacerelle.client.signal.spqr.message import PayloadType, decode_message
from custom_components.pacerelle.client.signal.wire.frame import parse_frame
from custom_components.pacerelle.client.signal.wire.messages import PreKeySignalMessage
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[2] / "data" / "spqr_encoding" / "vectors.json").read_text()
)
MASK64 = (1 << 64) - 1


def lcg_message(seed: int, length: int) -> bytes:
    """The vectors' message function (see vectors.json "message_function")."""
    out = bytearray()
    state = seed
    for _ in range(length):
        state = (state * 6364136223846793005 + 1442695040888963407) & MASK64
        out.append(state >> 56)
    return bytes(out)


def chunks_needed(length: int) -> int:
    return -(-length // CHUNK_DATA_SIZE)


def rust_points_layout(decoder: PolyDecoder) -> str:
    """The decoder's kept points as spqr serializes them (per poly, sorted (x, y) BE)."""
    per_poly: list[list[tuple[int, int]]] = [[] for _ in range(16)]
    for x, mask, encoded in decoder.to_json()["rows"]:  # type: ignore[attr-defined]
        polys = [poly for poly in range(16) if mask >> poly & 1]
        ys = struct.unpack(f">{len(polys)}H", base64.b64decode(encoded))
        for poly, y in zip(polys, ys, strict=True):
            per_poly[poly].append((x, y))
    return ",".join(
        b"".join(struct.pack(">HH", x, y) for x, y in sorted(points)).hex() for points in per_poly
    )


# --- GF(2^16) -----------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "product", "quotient"), VECTORS["gf_mul_div"])
def test_gf_matches_spqr(a: int, b: int, product: int, quotient: int) -> None:
    assert gf.mul(a, b) == product
    assert gf.mul_slow(a, b) == product
    assert gf.div(a, b) == quotient


def test_gf_tables_generate_the_whole_group() -> None:
    assert len(set(gf.EXP[: gf.GROUP_ORDER])) == gf.GROUP_ORDER
    assert gf.EXP[gf.GROUP_ORDER] == 1
    assert all(v == 0 for v in gf.EXP[gf.ZERO_LOG :])
    assert all(gf.EXP[gf.LOG[a]] == a for a in range(1, gf.FIELD_SIZE, 97))


def test_gf_spqr_barrett_example() -> None:
    # gf.rs x86_barrett_reduction test: 0xf5 * 0x93, unreduced fits in 16 bits.
    assert gf.mul(0xF5, 0x93) == gf.mul_slow(0xF5, 0x93) == 29903


@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
def test_gf_field_laws(a: int, b: int, c: int) -> None:
    assert gf.mul(a, b) == gf.mul_slow(a, b) == gf.mul(b, a)
    assert gf.mul(a, gf.add(b, c)) == gf.add(gf.mul(a, b), gf.mul(a, c))
    assert gf.mul(gf.mul(a, b), c) == gf.mul(a, gf.mul(b, c))
    if b:
        assert gf.mul(gf.div(a, b), b) == a
    else:
        assert gf.div(a, b) == 0  # spqr's a * 0^(2^16-2)


# --- Encoder vectors --------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["encode"], ids=lambda v: f"len{v['len']}")
def test_encoder_chunks_match_spqr(vector: dict[str, Any]) -> None:
    message = lcg_message(vector["seed"], vector["len"])
    encoder = PolyEncoder.encode_bytes(message)
    chunks = [encoder.chunk_at(index) for index in vector["indices"]]
    assert [chunk.index for chunk in chunks] == vector["indices"]
    assert hashlib.sha256(b"".join(c.data for c in chunks)).hexdigest() == vector["sha256"]
    for index, data in vector["sample"].items():
        assert encoder.chunk_at(int(index)).data.hex() == data
    # Systematic: the first chunks carry the message itself (their tail past the
    # message's end holds values of the shorter polynomials, not padding).
    for index in range(chunks_needed(len(message))):
        part = message[32 * index : 32 * index + 32]
        assert encoder.chunk_at(index).data[: len(part)] == part


@pytest.mark.parametrize(("length", "rust"), VECTORS["encode_errors"])
def test_encoder_length_checks_match_spqr(length: int, rust: str) -> None:
    message = lcg_message(1, length)
    if rust.startswith("ERR"):
        with pytest.raises(EncodingError) as caught:
            PolyEncoder.encode_bytes(message)
        expected = {
            "ERR PolynomialError(MessageLengthEven)": EncodingErrorReason.MESSAGE_LENGTH_EVEN,
            "ERR PolynomialError(MessageLengthTooLong)": (
                EncodingErrorReason.MESSAGE_LENGTH_TOO_LONG
            ),
        }[rust]
        assert caught.value.reason is expected
        assert caught.value.kind is SignalErrorKind.PQ_RATCHET
    else:
        assert PolyEncoder.encode_bytes(message).chunk_at(0).data.hex() == rust


def test_next_chunk_walks_indices_and_wraps_like_spqr() -> None:
    message = lcg_message(7, 1152)
    encoder = PolyEncoder.encode_bytes(message)
    first = [encoder.next_chunk() for _ in range(40)]
    assert first == [encoder.chunk_at(i) for i in range(40)]
    assert encoder.counter == 40
    # spqr's idx is a u32 and the index its low 16 bits.
    late = PolyEncoder.from_json({**encoder.to_json(), "counter": 0xFFFF})
    assert late.next_chunk().index == 0xFFFF
    assert late.next_chunk().index == 0
    assert late.counter == 0x10001
    last = PolyEncoder.from_json({**encoder.to_json(), "counter": COUNTER_MODULUS - 1})
    assert last.next_chunk().index == 0xFFFF
    assert last.counter == 0


# --- Decoder vectors --------------------------------------------------------------


def _scenario_chunk(op: str, encoders: dict[tuple[int, int], PolyEncoder]) -> Chunk:
    seed, length, index, position, flip = (int(v) for v in op.split(":"))
    if (seed, length) not in encoders:
        encoders[seed, length] = PolyEncoder.encode_bytes(lcg_message(seed, length))
    data = bytearray(encoders[seed, length].chunk_at(index).data)
    data[position] ^= flip
    return Chunk(index, bytes(data))


@pytest.mark.parametrize("scenario", VECTORS["decode"], ids=lambda s: f"{s['kind']}-len{s['len']}")
def test_decoder_matches_spqr_step_by_step(scenario: dict[str, Any]) -> None:
    """Each step's decoded_message and the points kept at the end, as spqr has them."""
    decoder = PolyDecoder.new(scenario["len"])
    encoders: dict[tuple[int, int], PolyEncoder] = {}
    steps = []
    for op in scenario["ops"].split(" "):
        decoder.add_chunk(_scenario_chunk(op, encoders))
        decoded = decoder.decoded_message()
        steps.append("-" if decoded is None else hashlib.sha256(decoded).hexdigest()[:16])
    assert " ".join(steps) == scenario["steps"]
    layout = rust_points_layout(decoder)
    assert hashlib.sha256(layout.encode()).hexdigest() == scenario["points_sha256"]
    final = decoder.decoded_message()
    expected = lcg_message(scenario["seed"], scenario["len"])
    assert (final == expected) is scenario["final_is_message"]


# --- Against libsignal itself -------------------------------------------------------


def _braid_chunk(framed: bytes) -> tuple[PayloadType, Chunk]:
    message = parse_frame(framed)
    inner = message.message if isinstance(message, PreKeySignalMessage) else message
    braid, _ = decode_message(inner.pq_ratchet)
    assert braid.chunk is not None
    return braid.payload, braid.chunk


def _check_libsignal_chunks(chunks: list[Chunk], length: int) -> None:
    """Chunks 0, 1, ... of one value from libsignal: ours are identical, parity decodes."""
    systematic = chunks_needed(length)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    decoder = PolyDecoder.new(length)
    for chunk in chunks[:systematic]:
        decoder.add_chunk(chunk)
    value = decoder.decoded_message()
    assert value is not None
    encoder = PolyEncoder.encode_bytes(value)
    assert [encoder.next_chunk() for _ in chunks] == chunks
    parity_only = PolyDecoder.new(length)
    for chunk in reversed(chunks[systematic:]):
        parity_only.add_chunk(chunk)
    assert parity_only.decoded_message() == value


@pytest.mark.interop
@pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed")
def test_libsignal_chunks_are_ours() -> None:
    """libsignal's SPQR sends the header (96 B), ct1 (960 B) and ek (1152 B) in chunks,
    parity ones included when the other side stays silent."""
    with ReferencePeer("agent:a") as agent, ReferencePeer("human:b") as human:
        human.process_prekey_bundle("agent:a", agent.generate_prekey_bundle())
        header = []
        for n in range(8):
            framed = human.encrypt("agent:a", b"h%d" % n)
            agent.decrypt("human:b", framed)
            header.append(_braid_chunk(framed))
        ct1 = [_braid_chunk(agent.encrypt("human:b", b"a%d" % n)) for n in range(64)]
        human.decrypt("agent:a", agent.encrypt("human:b", b"one ct1 chunk"))
        ek = [_braid_chunk(human.encrypt("agent:a", b"e%d" % n)) for n in range(80)]
    for payloads, expected_type, length in (
        (header, PayloadType.HDR, 96),
        (ct1, PayloadType.CT1, 960),
        (ek, PayloadType.EK, 1152),
    ):
        assert {payload for payload, _ in payloads} == {expected_type}
        _check_libsignal_chunks([chunk for _, chunk in payloads], length)


# --- Ports of spqr's polynomial.rs unit tests -------------------------------------


def test_encode_and_decode_small() -> None:
    encoder = PolyEncoder.encode_bytes(b"abcdefghij")
    decoder = PolyDecoder.new(10)
    decoder.add_chunk(encoder.chunk_at(1))
    decoder.add_chunk(encoder.chunk_at(2))
    assert decoder.decoded_message() == b"abcdefghij"


def test_encode_and_decode_large() -> None:
    needed = 1088 // 32 + 1
    encoder = PolyEncoder.encode_bytes(bytes([3]) * 1088)
    # None of these chunks carries the message itself: both sides interpolate.
    chunks = [encoder.chunk_at(i) for i in range(needed, 2 * needed + 1)]
    decoder = PolyDecoder.new(1088)
    for count, chunk in enumerate(chunks, start=1):
        decoder.add_chunk(chunk)
        decoded = decoder.decoded_message()
        if decoded is not None:
            assert decoded == bytes([3]) * 1088
            assert count == 1088 // 32
            return
    pytest.fail("should have decoded by now")


def test_poly_lagrange_interpolate() -> None:
    rng = random.Random(30)
    points = [(x, rng.randrange(1 << 16)) for x in range(30)]
    outside = [(x, lagrange.evaluate(points, x)) for x in range(30, 60)]
    assert all(lagrange.evaluate(outside, x) == y for x, y in points)


def test_to_and_from_json_midway() -> None:
    """spqr's to_and_from_pb, with our JSON state."""
    needed = 1088 // 32
    encoder = PolyEncoder.encode_bytes(bytes([3]) * 1088)
    decoder = PolyDecoder.new(1088)
    for i in range(2, needed):
        decoder.add_chunk(encoder.chunk_at(i))
    encoder2 = PolyEncoder.from_json(json.loads(json.dumps(encoder.to_json())))
    decoder2 = PolyDecoder.from_json(json.loads(json.dumps(decoder.to_json())))
    assert encoder2 == encoder
    assert decoder2 == decoder
    for i in range(2):
        decoder2.add_chunk(encoder2.chunk_at(i + needed))
    assert decoder2.decoded_message() == bytes([3]) * 1088


def test_consecutive_weights_are_lagrange_denominators() -> None:
    """spqr precomputes Lagrange polynomials for points 0..N-1; we keep their weights."""
    for count in (1, 3, 5, 30, 34, 36):
        for j, log_w in enumerate(lagrange.consecutive_log_weights(count)):
            denominator = 1
            for k in range(count):
                if k != j:
                    denominator = gf.mul(denominator, j ^ k)
            assert gf.mul(gf.EXP[log_w], denominator) == 1


# --- Properties ----------------------------------------------------------------------

even_messages = st.integers(0, 640).flatmap(lambda n: st.binary(min_size=2 * n, max_size=2 * n))


@settings(max_examples=60, deadline=None)
@given(message=even_messages, data=st.data())
def test_any_enough_distinct_chunks_rebuild_the_message(message: bytes, data: Any) -> None:
    needed = chunks_needed(len(message))
    indices = data.draw(
        st.lists(
            st.one_of(st.integers(0, 3 * needed + 3), st.integers(0, 0xFFFF)),
            min_size=needed,
            max_size=needed + 4,
            unique=True,
        )
    )
    encoder = PolyEncoder.encode_bytes(message)
    chunks = [encoder.chunk_at(i) for i in indices]
    # Duplicates of chunks already sent, anywhere in the stream, change nothing.
    duplicates = data.draw(st.lists(st.sampled_from(chunks), max_size=6)) if chunks else []
    stream = data.draw(st.permutations(chunks + duplicates))
    decoder = PolyDecoder.new(len(message))
    seen: set[int] = set()
    for chunk in stream:
        before = decoder.decoded_message()
        assert (before is None) == (len(seen) < needed)
        decoder = decoder.with_chunk(chunk)
        seen.add(chunk.index)
    assert decoder.decoded_message() == message
    # The state survives a JSON round trip unchanged.
    assert PolyDecoder.from_json(json.loads(json.dumps(decoder.to_json()))) == decoder


@settings(max_examples=25, deadline=None)
@given(message=even_messages, start=st.integers(0, 0xFFFF))
def test_with_next_chunk_leaves_the_encoder_alone(message: bytes, start: int) -> None:
    encoder = PolyEncoder.from_json(
        {**PolyEncoder.encode_bytes(message).to_json(), "counter": start}
    )
    snapshot = encoder.to_json()
    chunk, advanced = encoder.with_next_chunk()
    assert encoder.to_json() == snapshot
    assert chunk == encoder.chunk_at(start)
    assert advanced.counter == (start + 1) % COUNTER_MODULUS
    copy = encoder.copy()
    copy.next_chunk()
    assert encoder.to_json() == snapshot


def test_with_chunk_leaves_the_decoder_alone() -> None:
    encoder = PolyEncoder.encode_bytes(lcg_message(3, 96))
    decoder = PolyDecoder.new(96)
    decoder.add_chunk(encoder.chunk_at(5))
    snapshot = decoder.to_json()
    grown = decoder.with_chunk(encoder.chunk_at(6)).with_chunk(encoder.chunk_at(0))
    assert decoder.to_json() == snapshot
    assert decoder.decoded_message() is None
    assert grown.decoded_message() == lcg_message(3, 96)


def test_later_chunk_with_same_index_replaces_the_earlier_one() -> None:
    """sorted-vec's SortedSet::push replaces an equal element: the last copy wins."""
    encoder = PolyEncoder.encode_bytes(lcg_message(4, 64))
    good = encoder.chunk_at(0)
    bad = Chunk(0, bytes(32))
    decoder = PolyDecoder.new(64)
    for chunk in (good, bad, encoder.chunk_at(1)):
        decoder.add_chunk(chunk)
    assert decoder.decoded_message() == bytes(32) + lcg_message(4, 64)[32:]
    decoder.add_chunk(good)
    assert decoder.decoded_message() == lcg_message(4, 64)


def test_empty_message() -> None:
    assert PolyDecoder.new(0).decoded_message() == b""
    assert PolyEncoder.encode_bytes(b"").chunk_at(9).data == bytes(32)


# --- Bad input ---------------------------------------------------------------------


@pytest.mark.parametrize("index", [-1, 0x10000, 1 << 40, True, 1.0, "1", None])
def test_bad_chunk_index_rejected(index: Any) -> None:
    with pytest.raises(EncodingError) as caught:
        Chunk(index, bytes(32))
    assert caught.value.reason is EncodingErrorReason.CHUNK_INDEX
    assert caught.value.kind is SignalErrorKind.INVALID_MESSAGE
    with pytest.raises(EncodingError):
        PolyEncoder.encode_bytes(bytes(64)).chunk_at(index)


@pytest.mark.parametrize("data", [b"", bytes(31), bytes(33), bytearray(32), "x" * 32, None])
def test_bad_chunk_data_rejected(data: Any) -> None:
    with pytest.raises(EncodingError) as caught:
        Chunk(0, data)
    assert caught.value.reason is EncodingErrorReason.CHUNK_DATA
    assert isinstance(caught.value, SignalError)


@pytest.mark.parametrize(
    ("length", "reason"),
    [
        (1, EncodingErrorReason.MESSAGE_LENGTH_EVEN),
        (1089, EncodingErrorReason.MESSAGE_LENGTH_EVEN),
        (MAX_MESSAGE_LEN + 2, EncodingErrorReason.MESSAGE_LENGTH_TOO_LONG),
    ],
)
def test_bad_lengths_rejected(length: int, reason: EncodingErrorReason) -> None:
    with pytest.raises(EncodingError) as caught:
        PolyDecoder.new(length)
    assert caught.value.reason is reason
    with pytest.raises(EncodingError) as caught:
        PolyEncoder.encode_bytes(bytes(length))
    assert caught.value.reason is reason


def test_decoder_rejects_non_chunks() -> None:
    with pytest.raises(TypeError):
        PolyDecoder.new(64).add_chunk((0, bytes(32)))  # type: ignore[arg-type]


ENCODER_OK = {"message": base64.b64encode(bytes(64)).decode(), "counter": 3}
DECODER_OK = {"len_bytes": 64, "rows": [[0, 0xFFFF, base64.b64encode(bytes(32)).decode()]]}


@pytest.mark.parametrize(
    "state",
    [
        {},
        {**ENCODER_OK, "message": "not base64!"},
        {**ENCODER_OK, "message": base64.b64encode(bytes(3)).decode()},
        {**ENCODER_OK, "counter": -1},
        {**ENCODER_OK, "counter": COUNTER_MODULUS},
        {**ENCODER_OK, "counter": "3"},
        [1, 2],
    ],
)
def test_bad_encoder_state_rejected(state: Any) -> None:
    assert PolyEncoder.from_json(ENCODER_OK).counter == 3
    with pytest.raises(EncodingError) as caught:
        PolyEncoder.from_json(state)
    assert caught.value.reason is EncodingErrorReason.SERIALIZATION_INVALID
    assert caught.value.kind is SignalErrorKind.INVALID_STATE


@pytest.mark.parametrize(
    "state",
    [
        {},
        {**DECODER_OK, "len_bytes": 63},
        {**DECODER_OK, "len_bytes": MAX_MESSAGE_LEN + 2},
        {**DECODER_OK, "rows": "x"},
        {**DECODER_OK, "rows": [[0, 0xFFFF]]},
        {**DECODER_OK, "rows": [[0x10000, 1, "AAA="]]},
        {**DECODER_OK, "rows": [[0, 0, ""]]},
        {**DECODER_OK, "rows": [[0, 0x10000, "AAA="]]},
        {**DECODER_OK, "rows": [[0, 1, "AAAA"]]},
        {**DECODER_OK, "rows": [[0, 1, "AAA="], [0, 1, "AAA="]]},
        {**DECODER_OK, "rows": [[0, 1, "!!"]]},
    ],
)
def test_bad_decoder_state_rejected(state: Any) -> None:
    assert PolyDecoder.from_json(DECODER_OK).to_json() == DECODER_OK
    with pytest.raises(EncodingError) as caught:
        PolyDecoder.from_json(state)
    assert caught.value.reason is EncodingErrorReason.SERIALIZATION_INVALID
