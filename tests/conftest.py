"""Shared fixtures of the Home Assistant tests."""

import logging
from collections.abc import Generator
from pathlib import Path

import pytest
from pytest_homeassistant_custom_component.common import get_test_config_dir

from tests.helpers.loop_blocking import BlockingCatches, strict_loop_blocking

# The harness's plugin logs every SQL statement (INFO); the recorder's thread goes on
# committing after a test's output capture ended, and those lines landed in the suite's
# output between the progress dots. No test reads them.
logging.getLogger("sqlalchemy.engine").setLevel(logging.WARNING)


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(request: pytest.FixtureRequest) -> None:
    """Let Home Assistant load custom_components/pacerelle in every test that has `hass`.

    Tests without `hass` (the Signal engine, the emulator) do not pay for one.
    """
    if "hass" in request.fixturenames:
        request.getfixturevalue("enable_custom_integrations")


@pytest.fixture
def hass_config_dir(hass_tmp_config_dir: str) -> str:
    """A private configuration directory per test: agent stores never leak between tests."""
    return hass_tmp_config_dir


SHARED_STORES = Path(get_test_config_dir(".storage", "pacerelle"))


@pytest.fixture(autouse=True)
def no_store_in_the_shared_config_dir() -> Generator[None]:
    """Fail the test that writes an agent store into the harness's shared config directory.

    Every test gets a private one (hass_config_dir above); a store left in the shared one
    makes later tests see a second agent.
    """
    yield
    leaked = sorted(path.name for path in SHARED_STORES.glob("*")) if SHARED_STORES.exists() else []
    assert not leaked, f"agent stores written to the shared test config dir: {leaked}"


@pytest.fixture(autouse=True)
def no_blocking_calls_in_the_loop() -> Generator[BlockingCatches]:
    """Fail the test in which Pacerelle's code blocks the event loop
    (tests/helpers/loop_blocking.py).

    Checked after the test and its `hass` are torn down, so unloading is covered too.
    """
    with strict_loop_blocking() as catches:
        yield catches
    assert not catches.found, f"blocking calls on the event loop: {catches.found}"
