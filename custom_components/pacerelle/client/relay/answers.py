"""The one door for what the Pacerelle server sends: bounded JSON, then checked values.

The relay is not trusted (a hostile or broken relay is in the threat model): every REST
answer and every gateway frame goes through `parse_json` (size cap, no NaN or Infinity, a
nesting cap) and every value taken from it through a checker here (type, finiteness,
range, length). What does not fit is a PacerelleResponseError, never another exception:
the caller retries with backoff as for an unreachable server (ConfigEntryNotReady at
set-up, a reconnection later).

Python's parser raises RecursionError, not ValueError, on deep nesting (about 100,000
levels): it is caught here, and a shallower nesting past MAX_JSON_DEPTH is refused too.
"""

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..device_ids import is_device_id
from ..errors import PacerelleResponseError
from ..limits import (
    MAX_ANSWER_BYTES,
    MAX_DEVICE_ID,
    MAX_EXPIRES_IN,
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_RELAY_ID_CHARS,
    MAX_SERVER_TEXT_CHARS,
    MAX_TOKEN_CHARS,
    MIN_EXPIRES_IN,
)

type Json = Any


def parse_json(raw: bytes | str, what: str, *, limit: int = MAX_ANSWER_BYTES) -> Json:
    """The JSON value in `raw`, checked for size and nesting; PacerelleResponseError if not."""
    if len(raw) > limit:
        raise PacerelleResponseError(f"{what}: over {limit} bytes")
    try:
        value = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise PacerelleResponseError(f"{what}: JSON nested too deeply") from None
    except ValueError as err:  # also UnicodeDecodeError and ints over 4,300 digits
        raise PacerelleResponseError(f"{what}: not JSON ({err})") from None
    if _brackets(raw) > MAX_JSON_DEPTH:
        _check_depth(value, what)
    return value


def json_object(raw: bytes | str, what: str, *, limit: int = MAX_ANSWER_BYTES) -> dict[str, Json]:
    """A JSON object answer ({} for an empty body)."""
    if not raw.strip():
        return {}
    value = parse_json(raw, what, limit=limit)
    if not isinstance(value, dict):
        raise PacerelleResponseError(f"{what}: not a JSON object")
    return value


def json_list(
    raw: bytes | str, what: str, *, max_items: int, limit: int = MAX_ANSWER_BYTES
) -> list[dict[str, Json]]:
    """A JSON list answer of at most `max_items`; its objects (other items are skipped)."""
    value = parse_json(raw, what, limit=limit)
    if not isinstance(value, list) or len(value) > max_items:
        raise PacerelleResponseError(f"{what}: not a JSON list of at most {max_items} items")
    return [item for item in value if isinstance(item, dict)]


def text(body: Mapping[str, Json], name: str, *, max_chars: int = MAX_SERVER_TEXT_CHARS) -> str:
    """A non-empty printable string of at most `max_chars`."""
    value = body.get(name)
    if not isinstance(value, str) or not 0 < len(value) <= max_chars or not value.isprintable():
        raise PacerelleResponseError(
            f"`{name}` missing or not a printable string of 1 to {max_chars} characters"
        )
    return value


def identifier(body: Mapping[str, Json], name: str) -> str:
    """An id (agent, owner, conversation, blob)."""
    return text(body, name, max_chars=MAX_RELAY_ID_CHARS)


def device_id(value: object, name: str) -> str:
    """`value` as a canonical device id (a string, or a JSON integer in range).

    Every device id that reaches a session, the trust book or an event goes through here
    first, so that one device has one spelling.
    """
    if type(value) is int and 0 < value <= MAX_DEVICE_ID:
        return str(value)
    if isinstance(value, str) and is_device_id(value):
        return value
    raise PacerelleResponseError(
        f"`{name}` must be a device id: 1 to {MAX_DEVICE_ID} in ASCII digits, no leading zero"
    )


def token(body: Mapping[str, Json], name: str) -> str:
    """A credential: visible ASCII only, since it rides in a URL query and a header."""
    value = body.get(name)
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_TOKEN_CHARS
        or not all("!" <= char <= "~" for char in value)
    ):
        raise PacerelleResponseError(f"`{name}` missing or not a token of visible ASCII")
    return value


def seconds(
    body: Mapping[str, Json],
    name: str,
    *,
    low: float = MIN_EXPIRES_IN,
    high: float = MAX_EXPIRES_IN,
) -> int:
    """A whole number of seconds from `low` to `high` (a finite JSON number)."""
    return int(checked_seconds(body.get(name), name, low=low, high=high))


def checked_seconds(
    value: object, name: str, *, low: float = MIN_EXPIRES_IN, high: float = MAX_EXPIRES_IN
) -> float:
    """`value` as a finite float from `low` to `high`; booleans and strings are refused."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise PacerelleResponseError(f"`{name}` must be a number of seconds from {low} to {high}")
    return float(value)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e999 parses as infinity
        raise ValueError(f"{literal[:20]} is out of range")
    return value


def _brackets(raw: bytes | str) -> int:
    """An upper bound of the nesting depth (counted in C: cheap for every frame)."""
    if isinstance(raw, bytes):
        return raw.count(b"[") + raw.count(b"{")
    return raw.count("[") + raw.count("{")


def _check_depth(value: Json, what: str) -> None:
    """Walk the containers (iteratively, boundedly): PacerelleResponseError past the caps."""
    stack: list[tuple[Json, int]] = [(value, 1)]
    walked = 0
    while stack:
        item, depth = stack.pop()
        children: Iterable[Json]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        walked += 1
        if depth > MAX_JSON_DEPTH:
            raise PacerelleResponseError(f"{what}: JSON nested deeper than {MAX_JSON_DEPTH}")
        if walked > MAX_JSON_CONTAINERS:
            raise PacerelleResponseError(f"{what}: more than {MAX_JSON_CONTAINERS} JSON containers")
        stack.extend((child, depth + 1) for child in children)
