"""Lets the pinned test harness drive a newer Home Assistant (scripts/test-ha-next only).

pytest-homeassistant-custom-component copies Home Assistant's own test helpers from the one
release it pins, and newer releases move what those helpers import. scripts/test-ha-next
loads this module from scripts/lib as a pytest plugin (`-p ha_next_compat`) before the
harness; it bridges exactly those moves, each one named, and changes nothing on the pinned
release.
"""

import homeassistant  # 2026.11 aliases httpx to httpx2 here, before respx imports httpx
from homeassistant.components import logger

# 2026.11 keeps the test-only _clear_logger_overwrites in logger/helpers.py and no longer
# re-exports it from the package, where the 2026.10 harness imports it.
if not hasattr(logger, "_clear_logger_overwrites"):
    from homeassistant.components.logger import helpers

    logger._clear_logger_overwrites = helpers._clear_logger_overwrites  # type: ignore[attr-defined]

__all__ = ["homeassistant"]
