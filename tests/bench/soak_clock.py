"""The soak's Home Assistant clock: `time.time` and `time.monotonic` plus an offset the bench
moves forward (soak_probe's `advance` action), set before Home Assistant is imported.

asyncio's loop reads `time.monotonic()` at every turn, so moving the offset forward makes
every timer that falls due within the jump run at once (Home Assistant's own intervals, the
integration's token renewal, backoff and checkpoints), as if that much time had passed
quietly. What bound `time` functions before `install` (threading, queue) keeps real time:
only waits on the event loop jump. Datetimes (`dt_util.utcnow`) keep real time too: the
integration reads `time.time()` for its own schedules (prekey rotation, kept devices).
The offset carries over a restart through OFFSET_ENV.
"""

import os
import time

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
