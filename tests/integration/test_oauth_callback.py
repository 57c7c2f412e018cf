"""The state sent to Pacerelle: signed by this Home Assistant through its public OAuth2 API.

The callback view is Home Assistant's own; these tests decode with what it decodes with,
and the flow tests (tests/integration/test_config_flow.py) go through the view itself, with and
without
My Home Assistant.
"""

import ast
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import MY_AUTH_CALLBACK_PATH, _decode_jwt

from custom_components.pacerelle import oauth_callback
from custom_components.pacerelle.oauth_callback import CallbackState, redirect_uri

REDIRECT = "http://127.0.0.1:8123/auth/external/callback"


async def test_state_round_trips_through_the_callback_view_decoding(hass: HomeAssistant) -> None:
    state = CallbackState("flow-1", REDIRECT)
    claims = _decode_jwt(hass, await state.async_encode(hass))
    # What the view reads (flow_id) and what it hands to the flow: exactly our claims.
    assert claims == {"flow_id": "flow-1", "redirect_uri": REDIRECT}
    assert state.matches(claims)
    # The state carries the callback the flow chose, whatever the current request says.
    mine = CallbackState("flow-1", MY_AUTH_CALLBACK_PATH)
    assert _decode_jwt(hass, await mine.async_encode(hass)) == {
        "flow_id": "flow-1",
        "redirect_uri": MY_AUTH_CALLBACK_PATH,
    }


async def test_only_our_exact_claims_match(hass: HomeAssistant) -> None:
    state = CallbackState("flow-1", REDIRECT)
    claims = {"flow_id": "flow-1", "redirect_uri": REDIRECT}
    assert state.matches({**claims, "extra": 1})
    for changed in (
        {**claims, "flow_id": "flow-2"},
        {**claims, "redirect_uri": MY_AUTH_CALLBACK_PATH},
        {"flow_id": "flow-1"},
        None,
        "flow-1",
        [claims],
    ):
        assert not state.matches(changed)
    # A state signed by another instance (another secret) does not even decode here.
    other = (await state.async_encode(hass)).rsplit(".", 1)[0] + ".forged"
    assert _decode_jwt(hass, other) is None


async def test_redirect_uri_without_and_with_my_home_assistant(hass: HomeAssistant) -> None:
    # No frontend request (hence no HA-Frontend-Base header) and no My Home Assistant.
    assert redirect_uri(hass) is None
    hass.config.components.add("my")
    assert redirect_uri(hass) == MY_AUTH_CALLBACK_PATH


def test_no_private_home_assistant_name_is_imported() -> None:
    """Private names (a leading underscore) can change in any Home Assistant release."""
    tree = ast.parse(Path(oauth_callback.__file__).read_text())
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("homeassistant")
        for alias in node.names
    ]
    assert imported
    assert [name for name in imported if name.startswith("_")] == []
