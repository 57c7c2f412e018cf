"""Shared fixtures of the Home Assistant tests."""

import pytest


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
