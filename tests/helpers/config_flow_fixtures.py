"""Fixtures of the config flow tests: the flow driver and a server that answers garbage.

Registered with `pytest_plugins = ["tests.helpers.config_flow_fixtures"]` in the test modules. Such
plugins are global, so nothing here overrides a fixture of the harness (each test's own
configuration directory is tests/conftest.py's `hass_config_dir`).
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.emulator import EmulatorHandle


@pytest.fixture
async def garbage_url(socket_enabled: None) -> AsyncIterator[str]:
    """A web server where the API should be: it answers every request with a page."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>Welcome</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("")).rstrip("/")
    await server.close()


@pytest.fixture
async def notify_ready(hass: HomeAssistant) -> None:
    """The notify platform's dependencies, set up before the driver freezes the HTTP router."""
    assert await async_setup_component(hass, "repairs", {})


@pytest.fixture
async def driver(
    hass: HomeAssistant,
    hass_client: Any,
    hass_client_no_auth: Any,
    emulator: EmulatorHandle,
) -> AsyncIterator[FlowDriver]:
    """The flow API (the `config` integration) with a frontend and a browser client.

    `auth` (the OAuth2 callback view) is set up first, as at Home Assistant's start: the
    HTTP router is frozen once a client is served. After the test, the agents the flows
    created are stopped before the emulator is: an agent still reconnecting (after an
    options reload, say) would otherwise race the emulator's shutdown.
    """
    assert await async_setup_component(hass, "auth", {})
    assert await async_setup_component(hass, "config", {})
    yield FlowDriver(hass, await hass_client(), await hass_client_no_auth(), emulator)
    await hass.async_block_till_done()
    for entry in hass.config_entries.async_entries(DOMAIN):
        if entry.state is ConfigEntryState.LOADED:
            await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
