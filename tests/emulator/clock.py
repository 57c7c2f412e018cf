"""The emulator's clock: wall time plus an offset that tests move forward."""

import asyncio
import time


class Clock:
    """Every expiry (requests, runtime tokens) reads this clock, never time.time()."""

    def __init__(self, offset: float = 0.0) -> None:
        self._offset = offset
        self._changed = asyncio.Event()

    def now(self) -> float:
        return time.time() + self._offset

    @property
    def offset(self) -> float:
        return self._offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds
        # Wake every waiter so that deadlines are checked against the new time.
        self._changed.set()
        self._changed = asyncio.Event()

    async def sleep_until(self, deadline: float) -> None:
        """Return once now() >= deadline, even if the clock jumps forward meanwhile."""
        while (remaining := deadline - self.now()) > 0:
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), timeout=remaining)
            except TimeoutError:
                continue
