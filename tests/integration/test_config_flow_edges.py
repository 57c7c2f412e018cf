"""The config flow's less travelled paths, each through the real callback view and emulator.

A frontend that asks for the external step again, an answer from Pacerelle with another
error or an empty code, a server gone between approval and exchange, and a store that
cannot be created at first install or at reauth.
"""

from pathlib import Path

import pytest
from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import AUTH_CALLBACK_PATH

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.config_flow_driver import FlowDriver, query_of
from tests.helpers.emulator import running_emulator

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


def _store_dir(hass: HomeAssistant) -> Path:
    return Path(hass.config.path(".storage", DOMAIN))


async def _new_agent_id(driver: FlowDriver, known: set[str]) -> str:
    """The agent Pacerelle made at the approval, before Home Assistant exchanged the code."""
    installations = await driver.emulator.admin("GET", "/installations")
    [agent_id] = {item["agent_id"] for item in installations} - known
    return str(agent_id)


async def test_the_frontend_asks_for_the_external_step_again(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    external = await driver.begin()
    again = await hass.config_entries.flow.async_configure(external["flow_id"])
    assert (again["type"], again["url"]) == ("external", external["url"])


@pytest.mark.parametrize(
    ("answer", "shown"),
    [({"error": "temporarily_unavailable"}, "temporarily_unavailable"), ({"code": ""}, "no code")],
)
async def test_another_error_or_an_empty_code_from_pacerelle(
    hass: HomeAssistant, driver: FlowDriver, answer: dict[str, str], shown: str
) -> None:
    external = await driver.begin()
    state = query_of(await driver.answer(external))["state"]
    response = await driver.browser.get(AUTH_CALLBACK_PATH, params={"state": state, **answer})
    assert response.status == 200
    result = await driver.fetch(external["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "authorization_failed")
    assert result["description_placeholders"] == {"error": shown}
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_server_gone_before_the_exchange(
    hass: HomeAssistant, driver: FlowDriver, socket_enabled: None
) -> None:
    async with running_emulator() as passing:
        driver.emulator = passing
        external = await driver.begin()
        redirect_url = await driver.answer(external)
    # The server stopped between the approval and the browser's return.
    await driver.come_back(redirect_url)
    result = await driver.fetch(external["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "cannot_connect")
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_a_store_that_cannot_be_written_creates_no_entry(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    external = await driver.begin()
    redirect_url = await driver.answer(external)
    agent_id = await _new_agent_id(driver, set())
    # A folder where the store's database goes: the write fails after the key was made.
    (_store_dir(hass) / f"{agent_id}.db").mkdir(parents=True)
    await driver.come_back(redirect_url)
    result = await driver.fetch(external["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "store_failed")
    assert hass.config_entries.async_entries(DOMAIN) == []
    # No document was written. (The cleanup deletes the document first and stops at the
    # folder put there, so the new key file stays; no entry refers to it.)
    assert not (_store_dir(hass) / f"{agent_id}.db").is_file()


async def test_reauth_that_cannot_keep_the_new_agent_keeps_the_old_one(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    assert (await driver.install(agent_name="Home"))["type"] == "create_entry"
    [entry] = hass.config_entries.async_entries(DOMAIN)
    old_agent_id, old_data = entry.data["agent_id"], dict(entry.data)
    await driver.emulator.admin("POST", f"/installations/{old_agent_id}/revoke")
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == SOURCE_REAUTH

    key = await driver.emulator.connect_key()
    external = await driver.submit(flow["flow_id"], {"connection_key": key})
    redirect_url = await driver.answer(external)
    new_agent_id = await _new_agent_id(driver, {old_agent_id})
    # A store of that agent exists already (say, restored from a backup): never overwritten.
    await agent_store(hass, new_agent_id).create({"installation": {"token": "older"}})
    await driver.come_back(redirect_url)
    result = await driver.fetch(flow["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "store_failed")
    await hass.async_block_till_done()
    # The entry is as it was, set up again (and asking for reauth again: still revoked).
    assert dict(entry.data) == old_data
    assert await agent_store(hass, old_agent_id).exists()
    assert entry.state is ConfigEntryState.SETUP_ERROR
    document = await agent_store(hass, new_agent_id).load()
    assert document["installation"] == {"token": "older"}
