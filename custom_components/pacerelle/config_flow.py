"""Config flow for Pacerelle: Agent Connect in the Home Assistant UI.

This is the first step only (the form); the Agent Connect handshake that follows it
(registration, PKCE, approval in Pacerelle, code exchange) is built by the config flow issue.
"""

from typing import Any, override

import probatio
from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.helpers.selector import (
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)

from .const import (
    CONF_AGENT_DESCRIPTION,
    CONF_AGENT_NAME,
    CONF_CONNECTION_KEY,
    DEFAULT_AGENT_DESCRIPTION,
    DEFAULT_AGENT_NAME,
    DOMAIN,
)

USER_SCHEMA = probatio.Schema(
    {
        probatio.Required(CONF_CONNECTION_KEY): TextSelector(
            TextSelectorConfig(type=TextSelectorType.PASSWORD)
        ),
        probatio.Required(CONF_AGENT_NAME, default=DEFAULT_AGENT_NAME): str,
        probatio.Required(CONF_AGENT_DESCRIPTION, default=DEFAULT_AGENT_DESCRIPTION): str,
    }
)


class PacerelleConfigFlow(ConfigFlow, domain=DOMAIN):
    """Connect Home Assistant to Pacerelle as an agent."""

    VERSION = 1

    @override
    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for the connection key created in Pacerelle."""
        if user_input is None:
            return self.async_show_form(step_id="user", data_schema=USER_SCHEMA)
        return self.async_abort(reason="agent_connect_unavailable")
