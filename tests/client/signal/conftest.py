"""Signal engine tests run without Home Assistant: no integration loading here."""

import pytest


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations() -> None:
    """Override the HA-wide autouse fixture: the engine knows nothing of Home Assistant."""
