"""Where Pacerelle sends the browser back: Home Assistant's standard OAuth2 callback.

The `auth` integration serves `/auth/external/callback`: it decodes `state` as a JWT signed
with this instance's secret and resumes the flow it names. With My Home Assistant the redirect
URI is its oauth redirect (Home Assistant need not be reachable from the internet), otherwise
the URL the frontend is served from. Only Home Assistant can sign that state, through one
public API, `async_generate_authorize_url`; Pacerelle builds the authorization URL itself, so
`StateSigner` is an implementation whose URL is never visited, and the state is read back from
its query (no private Home Assistant name). The flow id (one flow asks Pacerelle once) and PKCE
bind the answer to this authorization.
"""

from dataclasses import dataclass
from typing import Any, override

from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import (
    LocalOAuth2Implementation,
    async_get_redirect_uri,
)
from yarl import URL

from .const import DOMAIN

# The URL Home Assistant puts the signed state into; nothing ever requests it.
SIGNING_URL = "https://state.invalid/authorize"


def redirect_uri(hass: HomeAssistant) -> str | None:
    """The callback URL for this flow, or None outside a frontend request without My."""
    try:
        return async_get_redirect_uri(hass)
    except RuntimeError:
        return None


class StateSigner(LocalOAuth2Implementation):
    """Home Assistant's own OAuth2 implementation, used only to sign a flow's state."""

    def __init__(self, hass: HomeAssistant, callback_url: str) -> None:
        super().__init__(hass, DOMAIN, "", "", SIGNING_URL, SIGNING_URL)
        self._callback_url = callback_url

    @property
    @override
    def redirect_uri(self) -> str:
        # The callback the flow chose, not one looked up again from the current request.
        return self._callback_url

    async def async_sign(self, flow_id: str) -> str:
        url = URL(await self.async_generate_authorize_url(flow_id))
        return url.query["state"]


@dataclass(frozen=True)
class CallbackState:
    """The claims of the `state` sent to Pacerelle, kept by the flow to check the return."""

    flow_id: str
    redirect_uri: str

    async def async_encode(self, hass: HomeAssistant) -> str:
        """The signed `state` parameter the callback view will decode."""
        return await StateSigner(hass, self.redirect_uri).async_sign(self.flow_id)

    def matches(self, returned: Any) -> bool:
        """Whether the decoded claims the callback delivered are exactly ours."""
        if not isinstance(returned, dict):
            return False
        return (
            returned.get("flow_id") == self.flow_id
            and returned.get("redirect_uri") == self.redirect_uri
        )
