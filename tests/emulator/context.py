"""The emulator object every route reaches through the aiohttp application."""

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .clock import Clock
from .config import EmulatorConfig
from .faults import Faults
from .persistence import Storage
from .state import Json

if TYPE_CHECKING:
    from .gateway import GatewayHub
    from .human_side import HumanSide

MAX_EVENTS = 1000
_LOGGER = logging.getLogger(__name__)


class Emulator:
    """State, clock, faults and the live parts (gateway connections, human devices)."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self.storage = Storage(config.state_file)
        self.state = self.storage.load()
        self.clock = Clock(self.state.clock_offset)
        self.faults = Faults()
        self.events: deque[Json] = deque(maxlen=MAX_EVENTS)
        # Set by create_app: they need the emulator themselves.
        self.hub: GatewayHub
        self.humans: HumanSide

    def now(self) -> float:
        return self.clock.now()

    def commit(self) -> None:
        """Persist after every change, so that a restarted emulator finds it again."""
        self.state.clock_offset = self.clock.offset
        self.storage.save(self.state)

    def close(self) -> None:
        self.storage.close()

    def record(self, kind: str, **fields: Any) -> None:
        event = {"kind": kind, "at": self.now(), "wall": time.time(), **fields}
        self.events.append(event)
        _LOGGER.debug("event %s", event)


EMULATOR = web.AppKey("emulator", Emulator)


def emulator_of(request: web.Request) -> Emulator:
    return request.app[EMULATOR]
