"""Config entries of agents installed on the running emulator, set up in a real Home Assistant."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import (
    CONF_AGENT_ID,
    CONF_AGENT_NAME,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DOMAIN,
    ENTRY_MINOR_VERSION,
    ENTRY_VERSION,
)
from custom_components.pacerelle.runtime import PacerelleRuntime
from custom_components.pacerelle.store.agent_store import agent_store
from tests.emulator_fixtures import EmulatorHandle, Installed


async def add_entry(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    installed: Installed,
    *,
    options: dict[str, Any] | None = None,
    create_store: bool = True,
) -> MockConfigEntry:
    """The entry and store the config flow would have made for `installed`."""
    if create_store:
        await agent_store(hass, installed.agent_id).create(
            {
                "installation": {
                    "token": installed.installation_token,
                    "agent_id": installed.agent_id,
                    "owner_id": installed.owner_id,
                    "conversation_id": installed.conversation_id,
                    "server_url": emulator.base_url,
                }
            }
        )
    entry = MockConfigEntry(
        domain=DOMAIN,
        version=ENTRY_VERSION,
        minor_version=ENTRY_MINOR_VERSION,
        unique_id=installed.owner_id,
        title="Home",
        data={
            CONF_AGENT_ID: installed.agent_id,
            CONF_OWNER_ID: installed.owner_id,
            CONF_CONVERSATION_ID: installed.conversation_id,
            CONF_SERVER_URL: emulator.base_url,
            CONF_AGENT_NAME: "Home",
        },
        options=options or {},
    )
    entry.add_to_hass(hass)
    return entry


async def wait_until(condition: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polls state owned by other tasks
            await asyncio.sleep(0.01)


@asynccontextmanager
async def connected_entry(
    hass: HomeAssistant, entry: MockConfigEntry
) -> AsyncIterator[PacerelleRuntime]:
    """The entry set up and its runtime connected; unloaded at the end of a block that passed.

    A failing block leaves the entry loaded, as a test that unloads on its last line does.
    """
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    yield runtime
    assert await hass.config_entries.async_unload(entry.entry_id)
