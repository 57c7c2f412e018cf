"""A plain http server off this machine is refused on the user step (server_url.py): the
form comes back with insecure_server_url and the fields as typed (never the key), nothing
reaches any server, and the same form, corrected, goes on to Pacerelle with the same key."""

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.config_flow_driver import FlowDriver, user_input
from tests.helpers.options_flow import suggested

pytest_plugins = ["tests.helpers.config_flow_fixtures"]

HOME_NETWORK = "http://192.168.1.20:8080"


async def test_plain_http_off_loopback_is_refused_on_the_form(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    form = await driver.start()
    key = await driver.emulator.connect_key()
    refused = await driver.submit(
        form["flow_id"], user_input(key, HOME_NETWORK, agent_name="Maison")
    )
    assert (refused["type"], refused["step_id"], refused["errors"]) == (
        "form",
        "user",
        {"base": "insecure_server_url"},
    )
    shown = suggested(refused)
    assert (shown["agent_name"], shown["advanced"]) == ("Maison", {"server_url": HOME_NETWORK})
    assert shown["connection_key"] is None
    driver.assert_never_sent(key)
    # Nothing was asked of any server: no request, the key unspent.
    assert await driver.emulator.admin("GET", "/requests") == []

    corrected = await driver.submit(
        form["flow_id"], user_input(key, driver.emulator.base_url, agent_name="Maison")
    )
    assert corrected["type"] == "external"
    [request] = await driver.emulator.admin("GET", "/requests")
    assert request["agent_name"] == "Maison"
    assert hass.config_entries.async_entries(DOMAIN) == []
