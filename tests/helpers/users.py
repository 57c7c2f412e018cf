"""Home Assistant users who are not administrators, and their websocket calls.

A real user of Home Assistant's "Users" group (what a wall tablet's or a child's account
is), optionally limited to some entities by a policy; and `ws_call`, an action called over
the websocket API as the frontend or a script of that user calls it.
"""

from typing import Any

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.auth.permissions import PolicyPermissions
from homeassistant.auth.permissions.types import PolicyType
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import CLIENT_ID
from pytest_homeassistant_custom_component.typing import MockHAClientWebSocket

from custom_components.pacerelle.const import DOMAIN


async def limited_user(
    hass: HomeAssistant, name: str = "Wall tablet", policy: PolicyType | None = None
) -> tuple[User, str]:
    """A user of the "Users" group (limited further by `policy`); (user, access token)."""
    user = await hass.auth.async_create_user(name, group_ids=[GROUP_ID_USER])
    if policy is not None:
        user.permissions = PolicyPermissions(policy, hass.auth._store._perm_lookup)
    refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
    return user, hass.auth.async_create_access_token(refresh)


async def ws_call(
    client: MockHAClientWebSocket, service: str, data: dict[str, Any], *, response: bool = True
) -> dict[str, Any]:
    """The websocket's answer to `pacerelle.<service>` (its `success`, `error`, `result`)."""
    await client.send_json_auto_id(
        {
            "type": "call_service",
            "domain": DOMAIN,
            "service": service,
            "service_data": data,
            "return_response": response,
        }
    )
    answer: dict[str, Any] = await client.receive_json()
    return answer
