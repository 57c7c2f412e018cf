"""A local Pacerelle: the HTTP API, the agent gateway, the human devices and a chat page.

Run it with `scripts/emulator`; tests start it through `tests.helpers.emulator`.
"""

from .app import create_app
from .config import EmulatorConfig

__all__ = ["EmulatorConfig", "create_app"]
