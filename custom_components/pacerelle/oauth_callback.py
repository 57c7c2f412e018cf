"""Where Pacerelle sends the browser back: Home Assistant's standard OAuth2 callback.

The `auth` integration serves `/auth/external/callback`. It decodes `state` as a JWT signed
with this instance's secret, reads the flow id from it, and resumes that flow with
`{"state": <decoded claims>, "code" or "error": ...}`. With My Home Assistant loaded the
redirect URI is https://my.home-assistant.io/redirect/oauth, which forwards the browser to
the user's own instance (so Home Assistant need not be reachable from the internet);
otherwise it is the URL the frontend is served from. A random nonce in the claims binds the
state to one authorization request of one flow: a forged or replayed state cannot match.
"""

import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Self

from homeassistant.core import HomeAssistant

# Home Assistant's own OAuth2 callback machinery; core integrations use it the same way.
from homeassistant.helpers.config_entry_oauth2_flow import (
    _encode_jwt,
    async_get_redirect_uri,
)

NONCE_BYTES = 24


def redirect_uri(hass: HomeAssistant) -> str | None:
    """The callback URL for this flow, or None outside a frontend request without My."""
    try:
        return async_get_redirect_uri(hass)
    except RuntimeError:
        return None


@dataclass(frozen=True)
class CallbackState:
    """The claims of the `state` sent to Pacerelle, kept by the flow to check the return."""

    flow_id: str
    redirect_uri: str
    nonce: str

    @classmethod
    def new(cls, flow_id: str, redirect_uri: str) -> Self:
        return cls(flow_id, redirect_uri, secrets.token_urlsafe(NONCE_BYTES))

    def encode(self, hass: HomeAssistant) -> str:
        """The signed `state` parameter the callback view will decode."""
        claims = {"flow_id": self.flow_id, "redirect_uri": self.redirect_uri, "nonce": self.nonce}
        return _encode_jwt(hass, claims)

    def matches(self, returned: Any) -> bool:
        """Whether the decoded claims the callback delivered are exactly ours."""
        if not isinstance(returned, dict):
            return False
        nonce = returned.get("nonce")
        return (
            returned.get("flow_id") == self.flow_id
            and returned.get("redirect_uri") == self.redirect_uri
            and isinstance(nonce, str)
            and hmac.compare_digest(nonce.encode(), self.nonce.encode())
        )
