"""`python -m tests.bench.soak_hass --config DIR ...`: Home Assistant on the soak's clock.

The clock is installed (soak_clock.py) before Home Assistant is imported (its datetimes
right after its `util.dt`, before anything else of it), then Home Assistant's own entry
point runs with the same arguments.
"""

import sys

from tests.bench import soak_clock

if __name__ == "__main__":
    soak_clock.install()
    import homeassistant.util
    import homeassistant.util.dt

    soak_clock.shift_datetimes(homeassistant.util.dt, homeassistant.util)
    from homeassistant.__main__ import main

    sys.exit(main())
