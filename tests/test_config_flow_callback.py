"""The state sent to Pacerelle: signed by this Home Assistant, bound to one flow and request."""

from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import MY_AUTH_CALLBACK_PATH, _decode_jwt

from custom_components.pacerelle.oauth_callback import CallbackState, redirect_uri

REDIRECT = "http://127.0.0.1:8123/auth/external/callback"


async def test_state_round_trips_through_the_callback_view_decoding(hass: HomeAssistant) -> None:
    state = CallbackState.new("flow-1", REDIRECT)
    claims = _decode_jwt(hass, state.encode(hass))
    # What the view reads (flow_id) and what it hands to the flow: exactly our claims.
    assert claims == {"flow_id": "flow-1", "redirect_uri": REDIRECT, "nonce": state.nonce}
    assert state.matches(claims)
    assert len(state.nonce) >= 32
    assert CallbackState.new("flow-1", REDIRECT).nonce != state.nonce


async def test_only_our_exact_claims_match(hass: HomeAssistant) -> None:
    state = CallbackState.new("flow-1", REDIRECT)
    claims = {"flow_id": "flow-1", "redirect_uri": REDIRECT, "nonce": state.nonce}
    assert state.matches({**claims, "extra": 1})
    for changed in (
        {**claims, "flow_id": "flow-2"},
        {**claims, "redirect_uri": MY_AUTH_CALLBACK_PATH},
        {**claims, "nonce": state.nonce[:-1]},
        {**claims, "nonce": None},
        {"flow_id": "flow-1", "redirect_uri": REDIRECT},
        None,
        "flow-1",
        [claims],
    ):
        assert not state.matches(changed)
    # A state signed by another instance (another secret) does not even decode here.
    other = CallbackState.new("flow-1", REDIRECT).encode(hass).rsplit(".", 1)[0] + ".forged"
    assert _decode_jwt(hass, other) is None


async def test_redirect_uri_without_and_with_my_home_assistant(hass: HomeAssistant) -> None:
    # No frontend request (hence no HA-Frontend-Base header) and no My Home Assistant.
    assert redirect_uri(hass) is None
    hass.config.components.add("my")
    assert redirect_uri(hass) == MY_AUTH_CALLBACK_PATH
