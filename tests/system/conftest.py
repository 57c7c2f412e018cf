"""Every test under tests/system/ is a system test (real processes): `-m system` selects them."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder `system` (the one place; no module repeats it)."""
    for item in items:
        if item.path.is_relative_to(__file__.rpartition("/")[0]):
            item.add_marker(pytest.mark.system)
