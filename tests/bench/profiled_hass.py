"""`python tests/bench/profiled_hass.py OUT ARGS...`: hass (`python -m homeassistant ARGS`)
with cProfile running from SIGUSR1 until SIGUSR2, which writes the profile to OUT.

So a profile covers the messages measured and not Home Assistant's start. cProfile
(Python 3.12 and later, sys.monitoring) records every thread, the executor's included.
"""

import cProfile
import runpy
import signal
import sys
from types import FrameType


def main() -> None:
    sys.path.pop(0)  # this script's folder: its modules must not shadow anything
    output = sys.argv[1]
    profile = cProfile.Profile()

    def start(_signal: int, _frame: FrameType | None) -> None:
        profile.enable()

    def stop(_signal: int, _frame: FrameType | None) -> None:
        profile.disable()
        profile.dump_stats(output)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    sys.argv = ["homeassistant", *sys.argv[2:]]
    runpy.run_module("homeassistant", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
