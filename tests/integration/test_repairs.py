"""The trust repair's fix flow (repairs.py) through Home Assistant's repairs HTTP API, as the
frontend drives it (issue 37, point 8): nothing is chosen beforehand, "keep it unverified"
decides nothing and leaves the repair, and the same repair then trusts the device."""

from http import HTTPStatus
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.repairs import issue_id
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.trust import a_new_phone

FIX = "/api/repairs/issues/fix"


async def test_a_device_kept_unverified_is_trusted_from_the_same_repair_later(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_client: ClientSessionGenerator
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent, _ = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    issue = issue_id(agent.entry.entry_id, owner, "2")
    await wait_until(lambda: ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None)
    client = await hass_client()

    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await client.post(path, json=body)
        assert response.status == HTTPStatus.OK, await response.text()
        result: dict[str, Any] = await response.json()
        return result

    form = await post(FIX, {"handler": DOMAIN, "issue_id": issue})
    [field] = form["data_schema"]
    assert (field["name"], field.get("required", False), "default" in field) == (
        "decision",
        False,
        False,
    )
    # Sent back with nothing chosen: asked again, nothing decided.
    unchosen = await post(f"{FIX}/{form['flow_id']}", {})
    assert (unchosen["type"], unchosen["errors"]) == ("form", {"decision": "choose"})
    kept = await post(f"{FIX}/{form['flow_id']}", {"decision": "keep"})
    assert (kept["type"], kept["reason"]) == ("abort", "kept")
    await hass.async_block_till_done()
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None
    device = agent.runtime.trust.book.get(owner, "2")
    assert device is not None
    assert device.state is TrustState.UNVERIFIED

    # The same repair, opened again, trusts it; then it goes.
    form = await post(FIX, {"handler": DOMAIN, "issue_id": issue})
    done = await post(f"{FIX}/{form['flow_id']}", {"decision": "trust"})
    assert done["type"] == "create_entry"
    await hass.async_block_till_done()
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue) is None
    device = agent.runtime.trust.book.get(owner, "2")
    assert device is not None
    assert device.state is TrustState.TRUSTED
