"""Every test under tests/system/ is a system test (real processes): `-m system` selects them.
The `system` fixture runs one, emulator and Home Assistant, in the test's tmp_path."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.system.harness import System, running_system


@pytest.fixture
async def system(tmp_path: Path, socket_enabled: None) -> AsyncIterator[System]:
    async with running_system(tmp_path) as running:
        yield running


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder `system` (the one place; no module repeats it)."""
    for item in items:
        if item.path.is_relative_to(__file__.rpartition("/")[0]):
            item.add_marker(pytest.mark.system)
