"""The soak's Home Assistant clock: `time.time` and `time.monotonic` plus an offset the bench
moves forward (soak_probe's `advance` action), set before Home Assistant is imported.

asyncio's loop reads `time.monotonic()` at every turn, so moving the offset forward makes
every timer that falls due within the jump run at once (Home Assistant's own intervals, the
integration's token renewal, backoff and checkpoints), as if that much time had passed
quietly. What bound `time` functions before `install` (threading, queue) keeps real time:
only waits on the event loop jump. Home Assistant's datetimes (`dt_util.utcnow`, `now`)
are shifted with them (`shift_datetimes`): its trackers of points in time compare both,
and a datetime left in real time would have them fire early, over and over. The offset
carries over a restart through OFFSET_ENV.
"""

import datetime as dt
import os
import time
from types import ModuleType

OFFSET_ENV = "PACERELLE_SOAK_CLOCK_OFFSET"

_real_time = time.time
_real_time_ns = time.time_ns
_real_monotonic = time.monotonic
_real_monotonic_ns = time.monotonic_ns
_offset = 0.0


def real_time() -> float:
    """The wall clock, unshifted."""
    return _real_time()


def offset() -> float:
    return _offset


def advance(seconds: float) -> float:
    """Move both clocks forward by `seconds`; the new offset."""
    global _offset  # noqa: PLW0603 - the one clock of the process
    if seconds < 0:
        raise ValueError("the clock only moves forward")
    _offset += seconds
    return _offset


def install() -> None:
    """Replace the `time` functions with the shifted ones, from OFFSET_ENV's offset."""
    global _offset  # noqa: PLW0603
    _offset = float(os.environ.get(OFFSET_ENV, "0"))
    time.time = lambda: _real_time() + _offset
    time.time_ns = lambda: _real_time_ns() + int(_offset * 1e9)
    time.monotonic = lambda: _real_monotonic() + _offset
    time.monotonic_ns = lambda: _real_monotonic_ns() + int(_offset * 1e9)


def shift_datetimes(dt_util: ModuleType, util: ModuleType) -> None:
    """Home Assistant's `utcnow` and `now` on the shifted `time.time()`, before the rest of
    Home Assistant imports them (`util` re-exports `utcnow`)."""

    def utcnow() -> dt.datetime:
        return dt.datetime.fromtimestamp(time.time(), dt.UTC)

    def now(time_zone: dt.tzinfo | None = None) -> dt.datetime:
        return dt.datetime.fromtimestamp(time.time(), time_zone or dt_util.DEFAULT_TIME_ZONE)

    dt_util.utcnow = utcnow
    dt_util.now = now
    util.utcnow = utcnow
