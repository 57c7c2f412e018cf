"""Agent Connect through Home Assistant's flow API against the running emulator.

The frontend's requests go over Home Assistant's HTTP API; the user's answer in Pacerelle
comes from the emulator; the browser returns through Home Assistant's OAuth2 callback view.
"""

import asyncio
import json
from pathlib import Path

import pytest
from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers.config_entry_oauth2_flow import MY_AUTH_CALLBACK_PATH

from custom_components.pacerelle.client_registry import STORAGE_KEY
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.issues.markdown import markdown_text
from custom_components.pacerelle.store.agent_store import agent_store
from tests.emulator import EmulatorConfig
from tests.helpers.config_flow_driver import (
    REDIRECT_URI,
    FlowDriver,
    abort_placeholders,
    query_of,
    user_input,
)
from tests.helpers.emulator import EmulatorHandle, running_emulator

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


async def _installations(emulator: EmulatorHandle) -> list[dict[str, object]]:
    result: list[dict[str, object]] = await emulator.admin("GET", "/installations")
    return result


async def _events(emulator: EmulatorHandle, kind: str) -> list[dict[str, object]]:
    result: list[dict[str, object]] = await emulator.admin("GET", f"/events?kind={kind}")
    return result


def _store_files(hass: HomeAssistant) -> list[str]:
    """The stores on disk (not SQLite's write-ahead log and index beside an open one)."""
    directory = Path(hass.config.path(".storage", "pacerelle"))
    if not directory.exists():
        return []
    return sorted(
        path.name for path in directory.glob("[!.]*") if not path.name.endswith(("-wal", "-shm"))
    )


async def test_happy_path_creates_the_agent(hass: HomeAssistant, driver: FlowDriver) -> None:
    emulator = driver.emulator
    form = await driver.start()
    assert form["type"] == "form"
    assert form["step_id"] == "user"
    key = await emulator.connect_key()
    external = await driver.submit(
        form["flow_id"],
        user_input(key, emulator.base_url, agent_name="Maison", agent_description="Chez nous"),
    )
    assert external["type"] == "external"
    assert external["step_id"] == "authorize"
    assert external["url"].startswith(emulator.base_url + "/agent-connect/authorize?")

    # What Pacerelle received: our callback URL, PKCE S256, a state bound to the flow.
    [request] = await emulator.admin("GET", "/requests")
    assert request["redirect_uri"] == REDIRECT_URI
    assert request["agent_name"] == "Maison"
    assert request["agent_description"] == "Chez nous"
    assert len(request["code_challenge"]) == 43

    redirect_url = await driver.answer(external)
    assert query_of(redirect_url)["state"] == request["state"]
    status, page = await driver.come_back(redirect_url)
    assert (status, page) == (200, "<script>window.close()</script>")
    result = await driver.fetch(external["flow_id"])
    assert result["type"] == "create_entry"
    assert result["title"] == "Maison"

    [installation] = await _installations(emulator)
    [entry] = hass.config_entries.async_entries(DOMAIN)
    assert entry.unique_id == "usr_demo"  # the account: one agent per Pacerelle account
    assert (entry.version, entry.minor_version) == (1, 3)
    agent_id = installation["agent_id"]
    assert entry.data == {
        "agent_id": installation["agent_id"],
        "owner_id": "usr_demo",
        "conversation_id": installation["conversation_id"],
        "server_url": emulator.base_url,
        "agent_name": "Maison",
    }
    assert entry.options == {}

    # The installation token lives only in the agent's encrypted store.
    document = await agent_store(hass, agent_id).load()
    token = document["installation"]["token"]
    assert document["installation"] == {
        "token": token,
        "agent_id": agent_id,
        "owner_id": "usr_demo",
        "conversation_id": installation["conversation_id"],
        "server_url": emulator.base_url,
    }
    assert token.startswith("pit_")
    assert await emulator.runtime_token(token)
    assert token not in json.dumps(entry.as_dict())
    driver.assert_never_sent(token)
    assert _store_files(hass) == [f"{agent_id}.db", f"{agent_id}.key", f"{agent_id}.lock"]


async def test_client_is_registered_once_per_server_and_callback(
    hass: HomeAssistant, driver: FlowDriver, hass_storage: dict[str, object]
) -> None:
    first = await driver.install(agent_name="First")
    # One agent per account: the second is another person's.
    key = await driver.emulator.connect_key("usr_partner")
    second = await driver.install(key=key, agent_name="Second")
    assert (first["type"], second["type"]) == ("create_entry", "create_entry")
    assert len(await _events(driver.emulator, "client_registered")) == 1
    stored = hass_storage[STORAGE_KEY]
    assert isinstance(stored, dict)
    [client] = stored["data"]["clients"]
    assert client["server_url"] == driver.emulator.base_url
    assert client["redirect_uri"] == REDIRECT_URI
    assert {item["client_id"] for item in await driver.emulator.admin("GET", "/requests")} == {
        client["client_id"]
    }
    assert len(hass.config_entries.async_entries(DOMAIN)) == 2


async def test_flows_started_together_share_one_client(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    results = await asyncio.gather(*(driver.begin() for _ in range(3)))
    assert [result["type"] for result in results] == ["external"] * 3
    assert len(await _events(driver.emulator, "client_registered")) == 1
    assert len({result["flow_id"] for result in results}) == 3


async def test_forgotten_client_is_registered_again(
    hass: HomeAssistant, driver: FlowDriver, hass_storage: dict[str, object]
) -> None:
    # A client id the server no longer knows (it was reset): the key must survive it.
    hass_storage[STORAGE_KEY] = {
        "version": 1,
        "key": STORAGE_KEY,
        "data": {
            "clients": [
                {
                    "server_url": driver.emulator.base_url,
                    "redirect_uri": REDIRECT_URI,
                    "client_id": "cli_forgotten",
                }
            ]
        },
    }
    result = await driver.install()
    assert result["type"] == "create_entry"
    stored = hass_storage[STORAGE_KEY]
    assert isinstance(stored, dict)
    [client] = stored["data"]["clients"]
    assert client["client_id"] != "cli_forgotten"


async def test_through_my_home_assistant(hass: HomeAssistant, driver: FlowDriver) -> None:
    # With My Home Assistant the callback URL is my.home-assistant.io, which forwards the
    # browser to this instance: no frontend header is needed.
    hass.config.components.add("my")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    key = await driver.emulator.connect_key()
    external = await hass.config_entries.flow.async_configure(
        result["flow_id"], user_input(key, driver.emulator.base_url)
    )
    assert external["type"] is FlowResultType.EXTERNAL_STEP
    redirect_url = await driver.answer(dict(external))
    assert redirect_url.startswith(MY_AUTH_CALLBACK_PATH + "?")
    status, _ = await driver.come_back(redirect_url)
    assert status == 200
    created = await hass.config_entries.flow.async_configure(result["flow_id"])
    assert created["type"] is FlowResultType.CREATE_ENTRY


async def test_without_a_callback_url(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    key = await emulator.connect_key()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], user_input(key, emulator.base_url)
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "no_redirect_uri"
    assert await emulator.admin("GET", "/requests") == []


async def test_unknown_or_used_connection_key(hass: HomeAssistant, driver: FlowDriver) -> None:
    result = await driver.begin("pck_unknown")
    assert result["type"] == "form"
    assert result["errors"] == {"base": "invalid_connection_key"}

    key = await driver.emulator.connect_key()
    assert (await driver.begin(key))["type"] == "external"
    result = await driver.begin(key)
    assert result["errors"] == {"base": "invalid_connection_key"}
    # The form comes back without the key, and a fresh key then works in the same flow.
    assert "pck_" not in json.dumps(result["data_schema"])
    retried = await driver.submit(
        result["flow_id"], user_input(await driver.emulator.connect_key(), driver.emulator.base_url)
    )
    assert retried["type"] == "external"


async def test_unreachable_server(
    hass: HomeAssistant, driver: FlowDriver, garbage_url: str
) -> None:
    key = await driver.emulator.connect_key()
    form = await driver.start()
    result = await driver.submit(form["flow_id"], user_input(key, "http://127.0.0.1:9"))
    assert result["errors"] == {"base": "cannot_connect"}
    result = await driver.submit(form["flow_id"], user_input(key, garbage_url))
    assert result["errors"] == {"base": "invalid_response"}
    await driver.emulator.faults(route_status={"/agent-connect/requests": 503})
    result = await driver.submit(form["flow_id"], user_input(key, driver.emulator.base_url))
    assert result["errors"] == {"base": "cannot_connect"}
    # 200 with an error body instead of the request: not Pacerelle's protocol.
    await driver.emulator.faults(route_status={"/agent-connect/requests": 200})
    result = await driver.submit(form["flow_id"], user_input(key, driver.emulator.base_url))
    assert result["errors"] == {"base": "invalid_response"}
    await driver.emulator.faults(route_status={"/agent-connect/requests": 400})
    result = await driver.submit(form["flow_id"], user_input(key, driver.emulator.base_url))
    assert result["errors"] == {"base": "request_refused"}
    await driver.emulator.faults(reset=True)
    # None of that spent the key.
    result = await driver.submit(form["flow_id"], user_input(key, driver.emulator.base_url))
    assert result["type"] == "external"


async def test_invalid_fields(hass: HomeAssistant, driver: FlowDriver) -> None:
    form = await driver.start()
    url = driver.emulator.base_url
    cases = [
        (user_input("k", "api.pacerelle.com"), {"base": "invalid_server_url"}),
        (user_input("k", url, agent_name="  "), {"agent_name": "invalid_agent_name"}),
        (user_input("k", url, agent_name="x" * 101), {"agent_name": "invalid_agent_name"}),
        (
            user_input("k", url, agent_description="x" * 1001),
            {"agent_description": "invalid_agent_description"},
        ),
    ]
    for body, errors in cases:
        result = await driver.submit(form["flow_id"], body)
        assert result["errors"] == errors
    assert await driver.emulator.admin("GET", "/requests") == []


async def test_user_denies_in_pacerelle(hass: HomeAssistant, driver: FlowDriver) -> None:
    external = await driver.begin()
    redirect_url = await driver.answer(external, approve=False)
    assert query_of(redirect_url)["error"] == "access_denied"
    status, _ = await driver.come_back(redirect_url)
    assert status == 200
    result = await driver.fetch(external["flow_id"])
    assert result["type"] == "abort"
    assert result["reason"] == "access_denied"
    assert hass.config_entries.async_entries(DOMAIN) == []
    assert _store_files(hass) == []


async def test_forged_state_is_refused(hass: HomeAssistant, driver: FlowDriver) -> None:
    external = await driver.begin()
    flow_id = external["flow_id"]
    redirect_url = await driver.answer(external)
    code = query_of(redirect_url)["code"]

    # A state not signed by this Home Assistant never reaches the flow.
    forged = redirect_url.replace(query_of(redirect_url)["state"], "eyJhbGciOiJub25lIn0.e30.")
    status, _ = await driver.come_back(forged)
    assert status == 400
    assert hass.config_entries.flow.async_get(flow_id)["step_id"] == "authorize"

    # Claims for this flow but another callback (as the view would deliver them).
    claims = {"flow_id": flow_id, "redirect_uri": MY_AUTH_CALLBACK_PATH}
    done = await hass.config_entries.flow.async_configure(flow_id, {"state": claims, "code": code})
    assert done["type"] is FlowResultType.EXTERNAL_STEP_DONE
    result = await driver.fetch(flow_id)
    assert result["type"] == "abort"
    assert result["reason"] == "state_mismatch"
    # The code was never presented to Pacerelle.
    assert await _events(driver.emulator, "code_exchanged") == []
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_authorization_expired(
    hass: HomeAssistant, driver: FlowDriver, socket_enabled: None
) -> None:
    async with running_emulator(EmulatorConfig(auth_request_ttl=1)) as short:
        driver.emulator = short
        external = await driver.begin()
        redirect_url = await driver.answer(external)
        await asyncio.sleep(1.1)
        await driver.come_back(redirect_url)
        result = await driver.fetch(external["flow_id"])
        assert result["type"] == "abort"
        assert result["reason"] == "authorization_expired"
        assert await _events(short, "code_exchanged") == []
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_code_exchange_refused(hass: HomeAssistant, driver: FlowDriver) -> None:
    external = await driver.begin()
    redirect_url = await driver.answer(external)
    # The user revoked the new installation before Home Assistant collected it.
    [installation] = await _installations(driver.emulator)
    await driver.emulator.admin("POST", f"/installations/{installation['agent_id']}/revoke")
    await driver.come_back(redirect_url)
    result = await driver.fetch(external["flow_id"])
    assert result["type"] == "abort"
    assert result["reason"] == "exchange_refused"
    assert hass.config_entries.async_entries(DOMAIN) == []
    assert _store_files(hass) == []


@pytest.mark.parametrize(
    ("status", "reason"),
    [(503, "cannot_connect"), (404, "exchange_refused"), (200, "invalid_response")],
)
async def test_code_exchange_fails(
    hass: HomeAssistant, driver: FlowDriver, status: int, reason: str
) -> None:
    external = await driver.begin()
    redirect_url = await driver.answer(external)
    await driver.emulator.faults(route_status={"/agent-connect/token": status})
    await driver.come_back(redirect_url)
    result = await driver.fetch(external["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", reason)
    assert _store_files(hass) == []


async def test_agent_already_configured_names_the_agent_to_revoke(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    """Agent Connect says whose account approved only once Pacerelle created the agent,
    and has no call to revoke it: the abort names the new agent, and the one kept."""
    assert (await driver.install(agent_name="Maison"))["type"] == "create_entry"
    [entry] = hass.config_entries.async_entries(DOMAIN)
    stores = _store_files(hass)

    # The same account approves a second agent, named as Home Assistant suggests.
    external = await driver.begin()
    await driver.come_back(await driver.answer(external))
    result = await driver.fetch(external["flow_id"])

    assert (result["type"], result["reason"]) == ("abort", "already_configured")
    installations = await _installations(driver.emulator)
    [left_behind] = [item for item in installations if item["agent_id"] != entry.data["agent_id"]]
    assert (left_behind["owner_id"], left_behind["revoked"]) == ("usr_demo", False)
    assert result["description_placeholders"] == {
        "agent_name": "Home Assistant",
        "agent_id": markdown_text(str(left_behind["agent_id"])),
        "configured_agent_name": "Maison",
        "configured_agent_id": markdown_text(str(entry.data["agent_id"])),
    }
    assert abort_placeholders("already_configured") == set(result["description_placeholders"])
    # Nothing else changed: one entry, no store for the agent left behind.
    assert hass.config_entries.async_entries(DOMAIN) == [entry]
    assert _store_files(hass) == stores


async def test_existing_store_is_never_overwritten(hass: HomeAssistant, driver: FlowDriver) -> None:
    external = await driver.begin()
    redirect_url = await driver.answer(external)
    [installation] = await _installations(driver.emulator)
    agent_id = str(installation["agent_id"])
    await agent_store(hass, agent_id).create({"installation": {"token": "older"}})
    await driver.come_back(redirect_url)
    result = await driver.fetch(external["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "store_failed")
    assert hass.config_entries.async_entries(DOMAIN) == []
    assert (await agent_store(hass, agent_id).load())["installation"] == {"token": "older"}
