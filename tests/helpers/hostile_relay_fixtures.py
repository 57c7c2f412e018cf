"""Fixtures of the hostile relay (tests/helpers/hostile_relay.py).

Enable with `pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]` in the test module.
"""

from collections.abc import AsyncIterator

import pytest

from tests.helpers.emulator import EmulatorHandle
from tests.helpers.hostile_relay import Hostility, running_hostile_emulator


@pytest.fixture
def hostility() -> Hostility:
    """What the relay does wrong; the test changes it while the relay runs."""
    return Hostility()


@pytest.fixture
async def hostile_emulator(
    socket_enabled: None, hostility: Hostility
) -> AsyncIterator[EmulatorHandle]:
    """The emulator behind `hostility`'s middleware, over TCP on 127.0.0.1."""
    async with running_hostile_emulator(hostility) as handle:
        yield handle
