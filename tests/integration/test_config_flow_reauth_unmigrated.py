"""A reauth that completes while its entry is in a state Home Assistant cannot unload
(config_flow.py `_async_replace_installation`): an entry of a newer major version than this
one (a downgrade) fails its migration and cannot be unloaded. The flow does not try to, so it
does not fail half-way: the new agent's store is made, the revoked agent's store is removed,
and the entry holds the new installation.

Nor does it ask for a reload Home Assistant would refuse for such an entry (it did: an
OperationNotAllowed logged from the reload task); the flow updates the entry and ends.
"""

import asyncio
import gc
from typing import Any

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState, OperationNotAllowed
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import DOMAIN, ENTRY_VERSION
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.config_flow_driver import FlowDriver

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


async def test_reauth_of_an_entry_that_cannot_be_unloaded_replaces_its_agent(
    hass: HomeAssistant, notify_ready: None, driver: FlowDriver
) -> None:
    assert (await driver.install(agent_name="Maison"))["type"] == "create_entry"
    [entry] = hass.config_entries.async_entries(DOMAIN)
    old_agent_id = str(entry.data["agent_id"])
    assert await hass.config_entries.async_unload(entry.entry_id)
    hass.config_entries.async_update_entry(entry, version=ENTRY_VERSION + 1)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.MIGRATION_ERROR
    assert not entry.state.recoverable

    entry.async_start_reauth(hass)
    await hass.async_block_till_done()
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == SOURCE_REAUTH
    key = await driver.emulator.connect_key()
    external = await driver.submit(flow["flow_id"], {"connection_key": key})
    await driver.come_back(await driver.answer(external))
    loop = asyncio.get_running_loop()
    forward = loop.get_exception_handler()
    refused: list[OperationNotAllowed] = []

    def record_refused_reload(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(error := context.get("exception"), OperationNotAllowed):
            refused.append(error)
        elif forward is not None:
            forward(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(record_refused_reload)
    try:
        result = await driver.fetch(flow["flow_id"])
        assert (result["type"], result["reason"]) == ("abort", "reauth_successful")
        await hass.async_block_till_done()
        gc.collect()  # the reload task's unretrieved error is reported when it is collected
    finally:
        loop.set_exception_handler(forward)
    assert refused == []  # no reload asked of an entry that cannot be reloaded

    new_agent_id = str(entry.data["agent_id"])
    assert new_agent_id != old_agent_id
    assert entry.data["agent_name"] == "Maison"
    assert await agent_store(hass, new_agent_id).exists()
    assert not await agent_store(hass, old_agent_id).exists()
    # Still the entry of a newer version: Home Assistant keeps it as it was.
    assert entry.state is ConfigEntryState.MIGRATION_ERROR
