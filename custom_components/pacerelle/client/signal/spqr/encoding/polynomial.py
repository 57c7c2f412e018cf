"""spqr's polynomial erasure code: PolyEncoder and PolyDecoder (encoding/polynomial.rs).

A message of even length is read as big-endian 16-bit field elements; element e
goes to polynomial e % 16 as its value at x = e // 16. Each polynomial is the
one of lowest degree through its values, so chunk t (the values of all 16
polynomials at x = t, big-endian) is the message itself for small t
(systematic) and redundancy after. Any `ceil(len / 32)` distinct chunks rebuild
the message (per polynomial: as many points as it has values).

Both classes are mutable like the Rust ones; `copy()` is cheap and
`with_next_chunk` / `with_chunk` are non-mutating variants for callers that
keep them inside immutable state.
"""

import base64
import binascii
import struct
from collections.abc import Mapping
from typing import Self

from . import gf, lagrange
from .chunk import ELEMENT_SIZE, MAX_CHUNK_INDEX, NUM_POLYS, Chunk
from .errors import EncodingError, EncodingErrorReason

# spqr's bound on message bytes (encode_bytes). Interpolation is quadratic in the
# points per polynomial: spqr's messages (at most 1152 bytes) need 36.
MAX_MESSAGE_LEN = (1 << 16) * NUM_POLYS
# The encoder's chunk counter is a u32 that wraps; the chunk index is its low 16 bits.
COUNTER_MODULUS = 1 << 32
_ALL_POLYS_MASK = (1 << NUM_POLYS) - 1
_CHUNK_STRUCT = struct.Struct(f">{NUM_POLYS}H")


def _check_message_len(length: int) -> None:
    if length % ELEMENT_SIZE:
        raise EncodingError(
            EncodingErrorReason.MESSAGE_LENGTH_EVEN,
            f"message length must be even, got {length}",
        )
    if length > MAX_MESSAGE_LEN:
        raise EncodingError(
            EncodingErrorReason.MESSAGE_LENGTH_TOO_LONG,
            f"message length must be at most {MAX_MESSAGE_LEN}, got {length}",
        )


def _check_index(index: int) -> None:
    if type(index) is not int or not 0 <= index <= MAX_CHUNK_INDEX:
        raise EncodingError(
            EncodingErrorReason.CHUNK_INDEX,
            f"chunk index must be an int in [0, {MAX_CHUNK_INDEX}], got {index!r}",
        )


def _invalid_state(detail: str) -> EncodingError:
    return EncodingError(EncodingErrorReason.SERIALIZATION_INVALID, detail)


def _b64decode(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise _invalid_state(f"{what} must be a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as err:
        raise _invalid_state(f"{what} is not valid base64") from err


def _json_int(data: Mapping[str, object], key: str, limit: int) -> int:
    value = data.get(key)
    if type(value) is not int or not 0 <= value < limit:
        raise _invalid_state(f"{key} must be an int in [0, {limit}), got {value!r}")
    return value


class PolyEncoder:
    """Produces the chunks of one message, in index order (spqr's PolyEncoder)."""

    __slots__ = ("_columns", "_counter", "_message", "_y_logs")

    _message: bytes
    _counter: int
    # Values of each polynomial at x = 0, 1, ... (the message, de-interleaved).
    _columns: tuple[tuple[int, ...], ...]
    _y_logs: tuple[list[int], ...]

    def __init__(self, message: bytes, counter: int = 0) -> None:
        _check_message_len(len(message))
        if type(counter) is not int or not 0 <= counter < COUNTER_MODULUS:
            raise EncodingError(
                EncodingErrorReason.SERIALIZATION_INVALID,
                f"counter must be an int in [0, 2^32), got {counter!r}",
            )
        elements = struct.unpack(f">{len(message) // ELEMENT_SIZE}H", message)
        self._message = bytes(message)
        self._counter = counter
        self._columns = tuple(elements[poly::NUM_POLYS] for poly in range(NUM_POLYS))
        self._y_logs = tuple([gf.LOG[y] for y in column] for column in self._columns)

    @classmethod
    def encode_bytes(cls, msg: bytes) -> Self:
        """Start encoding `msg` (even length, at most MAX_MESSAGE_LEN bytes)."""
        return cls(bytes(msg))

    @property
    def message(self) -> bytes:
        return self._message

    @property
    def counter(self) -> int:
        """How many chunks next_chunk has produced, modulo 2^32 (spqr's `idx`)."""
        return self._counter

    def chunk_at(self, index: int) -> Chunk:
        """The chunk with this index; does not move the counter."""
        _check_index(index)
        columns = self._columns
        # The message itself (the first chunks sent): the last column is the shortest one.
        if index < len(columns[-1]):
            return Chunk(index, _CHUNK_STRUCT.pack(*[column[index] for column in columns]))
        values = [0] * NUM_POLYS
        # Polynomials with the same number of points share their Lagrange basis at index.
        basis_by_count: dict[int, list[int]] = {}
        for poly, column in enumerate(self._columns):
            count = len(column)
            if index < count:
                values[poly] = column[index]
            elif count:
                basis = basis_by_count.get(count)
                if basis is None:
                    weights = lagrange.consecutive_log_weights(count)
                    basis = lagrange.basis_logs(tuple(range(count)), weights, index)
                    basis_by_count[count] = basis
                values[poly] = lagrange.combine(basis, self._y_logs[poly])
            # A polynomial with no points (message under 32 bytes) is zero.
        return Chunk(index, _CHUNK_STRUCT.pack(*values))

    def next_chunk(self) -> Chunk:
        """The chunk at the counter's index; advances the counter."""
        chunk = self.chunk_at(self._counter % (MAX_CHUNK_INDEX + 1))
        self._counter = (self._counter + 1) % COUNTER_MODULUS
        return chunk

    def with_next_chunk(self) -> tuple[Chunk, PolyEncoder]:
        """next_chunk without mutation: the chunk and the advanced encoder."""
        advanced = self.copy()
        return advanced.next_chunk(), advanced

    def copy(self) -> PolyEncoder:
        """An independent encoder in the same state (shares the immutable tables)."""
        other = object.__new__(PolyEncoder)
        other._message = self._message
        other._counter = self._counter
        other._columns = self._columns
        other._y_logs = self._y_logs
        return other

    def to_json(self) -> dict[str, object]:
        return {
            "message": base64.b64encode(self._message).decode("ascii"),
            "counter": self._counter,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        if not isinstance(data, Mapping):
            raise _invalid_state("encoder state must be a mapping")
        message = _b64decode(data.get("message"), "message")
        try:
            _check_message_len(len(message))
        except EncodingError as err:
            raise _invalid_state(f"stored message: {err.detail}") from err
        return cls(message, _json_int(data, "counter", COUNTER_MODULUS))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolyEncoder):
            return NotImplemented
        return (self._message, self._counter) == (other._message, other._counter)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"PolyEncoder(len={len(self._message)}, counter={self._counter})"


class PolyDecoder:
    """Collects chunks of a message of known length until it can be rebuilt.

    Mirrors spqr's PolyDecoder point for point: which points it keeps, that a
    later point with the same x replaces an earlier one (sorted-vec's
    SortedSet::push), and which points it rebuilds the message from.
    """

    __slots__ = ("_len_bytes", "_points")

    _len_bytes: int
    # Per polynomial: x -> y of the points kept.
    _points: tuple[dict[int, int], ...]

    def __init__(self, len_bytes: int) -> None:
        if type(len_bytes) is not int or len_bytes < 0:
            raise EncodingError(
                EncodingErrorReason.SERIALIZATION_INVALID,
                f"length must be a non-negative int, got {len_bytes!r}",
            )
        # spqr's decoder only checks evenness; the encoder's bound is kept too.
        _check_message_len(len_bytes)
        self._len_bytes = len_bytes
        self._points = tuple({} for _ in range(NUM_POLYS))

    @classmethod
    def new(cls, len_bytes: int) -> Self:
        return cls(len_bytes)

    @property
    def len_bytes(self) -> int:
        return self._len_bytes

    @property
    def points_needed(self) -> int:
        """spqr's `pts_needed`: field elements in the message."""
        return self._len_bytes // ELEMENT_SIZE

    def _necessary_points(self, poly: int) -> int:
        per_poly, remainder = divmod(self.points_needed, NUM_POLYS)
        return per_poly + 1 if poly < remainder else per_poly

    def add_chunk(self, chunk: Chunk) -> None:
        """Take in a chunk; any index, in any order, duplicates included."""
        if not isinstance(chunk, Chunk):
            raise TypeError(f"expected a Chunk, got {type(chunk).__name__}")
        x = chunk.index
        values = _CHUNK_STRUCT.unpack(chunk.data)
        for poly, points in enumerate(self._points):
            needed = self._necessary_points(poly)
            # Keep points that are message values (they spare an interpolation)
            # and any point while the polynomial is still short of points.
            if x < needed or len(points) < needed:
                points[x] = values[poly]

    def with_chunk(self, chunk: Chunk) -> PolyDecoder:
        """add_chunk without mutation: a new decoder that has also seen `chunk`."""
        other = self.copy()
        other.add_chunk(chunk)
        return other

    def copy(self) -> PolyDecoder:
        other = object.__new__(PolyDecoder)
        other._len_bytes = self._len_bytes
        other._points = tuple(dict(points) for points in self._points)
        return other

    def decoded_message(self) -> bytes | None:
        """The message once every polynomial has enough points, else None."""
        needed = [self._necessary_points(poly) for poly in range(NUM_POLYS)]
        if any(len(points) < n for points, n in zip(self._points, needed, strict=True)):
            return None
        values = [0] * self.points_needed
        # Lagrange data shared by polynomials interpolated from the same xs.
        weights_by_xs: dict[tuple[int, ...], tuple[int, ...]] = {}
        basis_by_target: dict[tuple[tuple[int, ...], int], list[int]] = {}
        for poly, points in enumerate(self._points):
            count = needed[poly]
            missing = [x for x in range(count) if x not in points]
            if missing:
                # Like spqr: interpolate from the `count` points of lowest x.
                xs = tuple(sorted(points)[:count])
                weights = weights_by_xs.get(xs)
                if weights is None:
                    weights = weights_by_xs[xs] = lagrange.log_weights(xs)
                y_logs = [gf.LOG[points[x]] for x in xs]
                for target in missing:
                    basis = basis_by_target.get((xs, target))
                    if basis is None:
                        basis = lagrange.basis_logs(xs, weights, target)
                        basis_by_target[xs, target] = basis
                    values[target * NUM_POLYS + poly] = lagrange.combine(basis, y_logs)
            for x in range(count):
                if x in points:
                    values[x * NUM_POLYS + poly] = points[x]
        return struct.pack(f">{len(values)}H", *values)

    def to_json(self) -> dict[str, object]:
        """{"len_bytes", "rows"}: one row [x, polys mask, base64 of their ys] per x."""
        rows: list[list[object]] = []
        for x in sorted(set().union(*self._points)):
            mask = 0
            ys: list[int] = []
            for poly, points in enumerate(self._points):
                if x in points:
                    mask |= 1 << poly
                    ys.append(points[x])
            packed = struct.pack(f">{len(ys)}H", *ys)
            rows.append([x, mask, base64.b64encode(packed).decode("ascii")])
        return {"len_bytes": self._len_bytes, "rows": rows}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        if not isinstance(data, Mapping):
            raise _invalid_state("decoder state must be a mapping")
        len_bytes = _json_int(data, "len_bytes", MAX_MESSAGE_LEN + 1)
        if len_bytes % ELEMENT_SIZE:
            raise _invalid_state(f"len_bytes must be even, got {len_bytes}")
        decoder = cls(len_bytes)
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise _invalid_state("rows must be a list")
        seen: set[int] = set()
        for row in rows:
            if not isinstance(row, list) or len(row) != 3:
                raise _invalid_state("each row must be [x, mask, ys]")
            x, mask, encoded = row
            if type(x) is not int or not 0 <= x <= MAX_CHUNK_INDEX or x in seen:
                raise _invalid_state(f"row x must be a new int in [0, {MAX_CHUNK_INDEX}]")
            if type(mask) is not int or not 0 < mask <= _ALL_POLYS_MASK:
                raise _invalid_state(f"row mask must be an int in [1, {_ALL_POLYS_MASK}]")
            packed = _b64decode(encoded, "row ys")
            polys = [poly for poly in range(NUM_POLYS) if mask >> poly & 1]
            if len(packed) != ELEMENT_SIZE * len(polys):
                raise _invalid_state("row ys length does not match its mask")
            seen.add(x)
            ys = struct.unpack(f">{len(polys)}H", packed)
            for poly, y in zip(polys, ys, strict=True):
                decoder._points[poly][x] = y
        return decoder

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolyDecoder):
            return NotImplemented
        return (self._len_bytes, self._points) == (other._len_bytes, other._points)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        kept = sum(len(points) for points in self._points)
        return f"PolyDecoder(len_bytes={self._len_bytes}, points_kept={kept})"
