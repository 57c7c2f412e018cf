"""Wall time of an inbox batch's stages, logged at DEBUG (scripts/bench shows their medians).

A message's latency is the sum of a few stages (waiting for the lock, decryption, the
store's write, the events, the ACKs); the clock laps them with `perf_counter`, which costs
well under a microsecond, so it runs whether or not the log line is wanted.
"""

import time


class StageClock:
    """Laps of one batch: each `lap(name)` adds the time since the previous lap to `name`."""

    def __init__(self) -> None:
        self._last = time.perf_counter()
        self.stages: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.add(name, now - self._last)
        self._last = now

    def add(self, name: str, seconds: float) -> None:
        """Time measured elsewhere (a part of a lap, such as the store write's share)."""
        self.stages[name] = self.stages.get(name, 0.0) + seconds

    def __str__(self) -> str:
        """`name=milliseconds` pairs, in the order the stages first came."""
        return " ".join(f"{name}={seconds * 1000:.2f}" for name, seconds in self.stages.items())
