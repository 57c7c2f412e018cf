"""Reauth: the installation was revoked in Pacerelle; a new one replaces it cleanly."""

from typing import Any

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.issues.markdown import markdown_text
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.config_flow_driver import FlowDriver, abort_placeholders

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


async def _revoked_entry(hass: HomeAssistant, driver: FlowDriver) -> tuple[ConfigEntry, str]:
    """An agent set up through the flow, then revoked by its owner; its reauth flow id.

    The runtime meets the refused runtime token at the next setup and raises
    ConfigEntryAuthFailed, which starts the reauth flow.
    """
    assert (await driver.install(agent_name="Maison"))["type"] == "create_entry"
    [entry] = hass.config_entries.async_entries(DOMAIN)
    await driver.emulator.admin("POST", f"/installations/{entry.data['agent_id']}/revoke")
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_ERROR
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == SOURCE_REAUTH
    return entry, flow["flow_id"]


async def _token(hass: HomeAssistant, agent_id: str) -> str:
    document: dict[str, Any] = await agent_store(hass, agent_id).load()
    return str(document["installation"]["token"])


async def test_reauth_replaces_the_agent(hass: HomeAssistant, driver: FlowDriver) -> None:
    entry, flow_id = await _revoked_entry(hass, driver)
    old_agent_id = str(entry.data["agent_id"])
    old_token = await _token(hass, old_agent_id)

    form = await driver.fetch(flow_id)
    assert (form["type"], form["step_id"]) == ("form", "reauth_confirm")
    assert form["description_placeholders"] == {"name": "Maison"}
    assert [field["name"] for field in form["data_schema"]] == ["connection_key"]

    key = await driver.emulator.connect_key()
    external = await driver.submit(flow_id, {"connection_key": key})
    # Pacerelle is asked for an agent with the same name, on the same server.
    [_, request] = await driver.emulator.admin("GET", "/requests")
    assert request["agent_name"] == "Maison"
    await driver.come_back(await driver.answer(external))
    result = await driver.fetch(flow_id)
    assert (result["type"], result["reason"]) == ("abort", "reauth_successful")
    await hass.async_block_till_done()

    installations = {
        item["agent_id"]: item for item in await driver.emulator.admin("GET", "/installations")
    }
    [new_agent_id] = set(installations) - {old_agent_id}
    assert entry.unique_id == "usr_demo"  # the account: unchanged by a new agent
    assert entry.title == "Maison"
    assert entry.data == {
        "agent_id": new_agent_id,
        "owner_id": "usr_demo",
        "conversation_id": installations[new_agent_id]["conversation_id"],
        "server_url": driver.emulator.base_url,
        "agent_name": "Maison",
    }
    # The old agent's store is gone, the new one holds the new token.
    assert not await agent_store(hass, old_agent_id).exists()
    new_token = await _token(hass, new_agent_id)
    assert new_token != old_token
    assert await driver.emulator.runtime_token(new_token)
    driver.assert_never_sent(new_token)
    # Reloaded with the new installation.
    assert entry.state is ConfigEntryState.LOADED
    assert hass.config_entries.flow.async_progress_by_handler(DOMAIN) == []


async def test_reauth_form_errors_then_success(hass: HomeAssistant, driver: FlowDriver) -> None:
    entry, flow_id = await _revoked_entry(hass, driver)
    result = await driver.submit(flow_id, {"connection_key": "pck_unknown"})
    assert (result["type"], result["errors"]) == ("form", {"base": "invalid_connection_key"})
    external = await driver.submit(flow_id, {"connection_key": await driver.emulator.connect_key()})
    await driver.come_back(await driver.answer(external))
    assert (await driver.fetch(flow_id))["reason"] == "reauth_successful"
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth_denied_leaves_the_entry_as_it_was(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    entry, flow_id = await _revoked_entry(hass, driver)
    old_agent_id, old_data = entry.data["agent_id"], dict(entry.data)
    old_token = await _token(hass, str(old_agent_id))
    external = await driver.submit(flow_id, {"connection_key": await driver.emulator.connect_key()})
    await driver.come_back(await driver.answer(external, approve=False))
    result = await driver.fetch(flow_id)
    assert (result["type"], result["reason"]) == ("abort", "access_denied")
    assert (entry.unique_id, dict(entry.data)) == ("usr_demo", old_data)
    assert await _token(hass, str(old_agent_id)) == old_token


async def test_reauth_with_another_account_changes_nothing(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    entry, flow_id = await _revoked_entry(hass, driver)
    before = (entry.unique_id, dict(entry.data))
    # A connection key of someone else's Pacerelle account.
    key = await driver.emulator.connect_key("usr_neighbour")
    external = await driver.submit(flow_id, {"connection_key": key})
    await driver.come_back(await driver.answer(external))
    result = await driver.fetch(flow_id)
    assert (result["type"], result["reason"]) == ("abort", "wrong_account")
    await hass.async_block_till_done()
    assert (entry.unique_id, dict(entry.data)) == before
    # The old store is untouched; the other account's agent got no store here.
    assert await agent_store(hass, entry.data["agent_id"]).exists()
    installations = await driver.emulator.admin("GET", "/installations")
    [other] = [item for item in installations if item["owner_id"] == "usr_neighbour"]
    assert not await agent_store(hass, other["agent_id"]).exists()
    # Agent Connect has no call to revoke it: the abort names it, and its account.
    assert result["description_placeholders"] == {
        "agent_name": "Maison",
        "agent_id": markdown_text(other["agent_id"]),
        "account_id": markdown_text("usr_neighbour"),
    }
    assert abort_placeholders("wrong_account") == set(result["description_placeholders"])
