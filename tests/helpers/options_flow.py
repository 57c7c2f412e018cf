"""The options flow through the frontend's options API (after the config flow made the entry)."""

from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.config_flow_driver import FlowDriver

OPTIONS_API = "/api/config/config_entries/options/flow"


async def installed_entry(hass: HomeAssistant, driver: FlowDriver) -> ConfigEntry:
    """The entry the whole config flow made, the only one."""
    assert (await driver.install())["type"] == "create_entry"
    [entry] = hass.config_entries.async_entries(DOMAIN)
    return entry


async def open_options(driver: FlowDriver, entry: ConfigEntry) -> dict[str, Any]:
    """The options form, as the frontend opens it."""
    return await driver.request("POST", OPTIONS_API, {"handler": entry.entry_id})


async def submit_options(
    driver: FlowDriver, form: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    """`body` sent to the open form as the frontend sends it; the flow's answer."""
    return await driver.request("POST", f"{OPTIONS_API}/{form['flow_id']}", body)


def suggested(form: dict[str, Any]) -> dict[str, Any]:
    """Field name -> suggested value, sections included, as the frontend shows them."""
    values: dict[str, Any] = {}
    for field in form["data_schema"]:
        if field.get("type") == "expandable":
            values[field["name"]] = suggested({"data_schema": field["schema"]})
            continue
        value = (field.get("description") or {}).get("suggested_value", field.get("default"))
        values[field["name"]] = value
    return values
