"""The first step of the config flow: what the user is asked for."""

import json
from pathlib import Path

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.pacerelle.const import (
    CONF_AGENT_DESCRIPTION,
    CONF_AGENT_NAME,
    CONF_CONNECTION_KEY,
    CONF_SERVER_URL,
    DEFAULT_AGENT_DESCRIPTION,
    DEFAULT_AGENT_NAME,
    DEFAULT_SERVER_URL,
    DOMAIN,
)


async def test_user_step_asks_for_a_connection_key(hass: HomeAssistant) -> None:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    schema = result["data_schema"].schema
    fields = {str(key): key for key in schema}
    assert set(fields) == {CONF_CONNECTION_KEY, CONF_AGENT_NAME, CONF_AGENT_DESCRIPTION, "advanced"}
    assert fields[CONF_AGENT_NAME].default() == DEFAULT_AGENT_NAME
    assert fields[CONF_AGENT_DESCRIPTION].default() == DEFAULT_AGENT_DESCRIPTION
    selector = schema[fields[CONF_CONNECTION_KEY]]
    assert selector.config["type"] == "password"
    # The server URL is folded away in a section, with Pacerelle's own server by default.
    advanced = schema[fields["advanced"]]
    assert advanced.options == {"collapsed": True}
    [server_url] = advanced.schema.schema
    assert str(server_url) == CONF_SERVER_URL
    assert server_url.default() == DEFAULT_SERVER_URL


# Before the browser leaves, the user fixes a problem in the form; after it came back the
# key is spent and the authorization answered, so the flow aborts (config_flow.py).
FORM_ERRORS = {
    "invalid_connection_key",
    "cannot_connect",
    "invalid_response",
    "request_refused",
    "invalid_server_url",
    "insecure_server_url",
    "invalid_agent_name",
    "invalid_agent_description",
}
ABORTS = {
    "access_denied",
    "authorization_failed",
    "authorization_expired",
    "state_mismatch",
    "exchange_refused",
    "cannot_connect",
    "invalid_response",
    "already_configured",
    "wrong_account",
    "store_failed",
    "no_redirect_uri",
    "reauth_successful",
}


def test_every_error_and_abort_is_translated() -> None:
    root = Path(__file__).parents[2] / "custom_components" / "pacerelle"
    strings = json.loads((root / "strings.json").read_text())
    assert set(strings["config"]["error"]) == FORM_ERRORS
    assert set(strings["config"]["abort"]) == ABORTS
    assert set(strings["options"]["error"]) == {"invalid_media_folder"}
    assert all(strings["config"]["error"].values())
    assert all(strings["config"]["abort"].values())
    # The one abort that carries the error Pacerelle sent back.
    assert "{error}" in strings["config"]["abort"]["authorization_failed"]
