"""Agent Connect against the running emulator: the happy path and every refusal."""

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from tests.helpers.emulator import REDIRECT_URI, AdminError, EmulatorHandle


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _request_body(client_id: str, challenge: str, **overrides: Any) -> dict[str, Any]:
    body = {
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "state-123",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "agent_name": "Home Assistant",
        "agent_description": "Controls the house <b>safely</b>.",
        "scope": "myagents:agent-connect",
    }
    return body | overrides


async def _status(
    emulator: EmulatorHandle, method: str, path: str, **kwargs: Any
) -> tuple[int, Any]:
    async with emulator.session.request(method, emulator.base_url + path, **kwargs) as response:
        if response.content_type == "application/json":
            return response.status, await response.json()
        return response.status, await response.text()


async def _start(emulator: EmulatorHandle, client_id: str, **overrides: Any) -> tuple[str, Any]:
    verifier, challenge = _pkce()
    key = await emulator.connect_key()
    started = await emulator.call(
        "POST",
        "/agent-connect/requests",
        headers={"Authorization": f"Bearer {key}"},
        json=_request_body(client_id, challenge, **overrides),
    )
    return verifier, started


def _token_form(client_id: str, code: str, verifier: str, **overrides: str) -> dict[str, str]:
    form = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code": code,
        "code_verifier": verifier,
    }
    return form | overrides


async def _approved_code(emulator: EmulatorHandle) -> tuple[str, str, str]:
    client_id = await emulator.register_client()
    verifier, started = await _start(emulator, client_id)
    approved = await emulator.admin("POST", f"/requests/{started['request_id']}/approve")
    code = parse_qs(urlsplit(approved["redirect_url"]).query)["code"][0]
    return client_id, verifier, code


async def test_the_whole_flow_through_the_approval_page(emulator: EmulatorHandle) -> None:
    client_id = await emulator.register_client()
    verifier, started = await _start(emulator, client_id)
    assert started["expires_in"] == 600
    assert started["expires_at"].endswith("Z")

    # The browser: the page shows the agent, escaped, and the form answers with a redirect.
    status, page = await _status(
        emulator,
        "GET",
        urlsplit(started["authorization_url"]).path
        + "?"
        + urlsplit(started["authorization_url"]).query,
    )
    assert status == 200
    assert "Home Assistant" in page
    assert "&lt;b&gt;safely&lt;/b&gt;" in page
    async with emulator.session.post(
        emulator.base_url + "/agent-connect/authorize",
        data={"request_id": started["request_id"], "decision": "approve"},
        allow_redirects=False,
    ) as response:
        assert response.status == 303
        location = response.headers["Location"]
    assert location.startswith(REDIRECT_URI + "?")
    query = parse_qs(urlsplit(location).query)
    assert query["state"] == ["state-123"]

    token = await emulator.call(
        "POST", "/agent-connect/token", data=_token_form(client_id, query["code"][0], verifier)
    )
    assert token["token_type"] == "Bearer"
    assert token["scope"] == "myagents:agent-connect"
    assert token["owner_id"] == "usr_demo"

    runtime = await emulator.call(
        "POST",
        "/agent-connect/runtime-token",
        headers={"Authorization": f"Bearer {token['installation_token']}"},
    )
    assert runtime["expires_in"] == 900
    assert runtime["agent_id"] == token["agent_id"]
    assert runtime["conversation_id"] == token["conversation_id"]

    listed = await emulator.admin("GET", "/installations")
    assert [item["agent_id"] for item in listed] == [token["agent_id"]]
    assert listed[0]["agent_name"] == "Home Assistant"
    assert listed[0]["revoked"] is False


async def test_denial_redirects_with_access_denied(emulator: EmulatorHandle) -> None:
    client_id = await emulator.register_client()
    _, started = await _start(emulator, client_id)
    denied = await emulator.admin("POST", f"/requests/{started['request_id']}/deny")
    query = parse_qs(urlsplit(denied["redirect_url"]).query)
    assert query == {"error": ["access_denied"], "state": ["state-123"]}
    with pytest.raises(AdminError) as err:
        await emulator.admin("POST", f"/requests/{started['request_id']}/approve")
    assert err.value.status == 409
    assert await emulator.admin("GET", "/installations") == []


async def test_connection_keys_are_one_use_and_must_exist(emulator: EmulatorHandle) -> None:
    client_id = await emulator.register_client()
    key = await emulator.connect_key()
    body = _request_body(client_id, _pkce()[1])
    headers = {"Authorization": f"Bearer {key}"}
    first, _ = await _status(
        emulator, "POST", "/agent-connect/requests", json=body, headers=headers
    )
    again, error = await _status(
        emulator, "POST", "/agent-connect/requests", json=body, headers=headers
    )
    unknown, _ = await _status(
        emulator,
        "POST",
        "/agent-connect/requests",
        json=body,
        headers={"Authorization": "Bearer pck_nope"},
    )
    missing, _ = await _status(emulator, "POST", "/agent-connect/requests", json=body)
    assert (first, again, unknown, missing) == (200, 401, 401, 401)
    assert "already used" in error["error"]


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ({"redirect_uri": "http://127.0.0.1:8123/other"}, "redirect_uri"),
        ({"client_id": "cli_unknown"}, "client_id"),
        ({"code_challenge_method": "plain"}, "S256"),
        ({"scope": "everything"}, "scope"),
        ({"agent_name": ""}, "agent_name"),
    ],
)
async def test_invalid_requests_are_refused_and_keep_the_key(
    emulator: EmulatorHandle, override: dict[str, str], fragment: str
) -> None:
    client_id = await emulator.register_client()
    key = await emulator.connect_key()
    headers = {"Authorization": f"Bearer {key}"}
    body = _request_body(client_id, _pkce()[1]) | override
    status, error = await _status(
        emulator, "POST", "/agent-connect/requests", json=body, headers=headers
    )
    assert status == 400
    assert fragment in error["error"]
    # A refused request does not spend the connection key.
    good = _request_body(client_id, _pkce()[1])
    status, _ = await _status(
        emulator, "POST", "/agent-connect/requests", json=good, headers=headers
    )
    assert status == 200


async def test_registration_needs_a_name_and_absolute_redirect_uris(
    emulator: EmulatorHandle,
) -> None:
    for body in (
        {"client_name": "x", "redirect_uris": []},
        {"client_name": "x", "redirect_uris": ["/relative"]},
        {"client_name": "", "redirect_uris": [REDIRECT_URI]},
        ["not", "an", "object"],
    ):
        status, _ = await _status(emulator, "POST", "/oauth/register", json=body)
        assert status == 400


async def test_expired_requests_cannot_be_approved_or_exchanged(
    emulator: EmulatorHandle,
) -> None:
    client_id = await emulator.register_client()
    _, started = await _start(emulator, client_id)
    await emulator.advance_clock(601)
    with pytest.raises(AdminError) as err:
        await emulator.admin("POST", f"/requests/{started['request_id']}/approve")
    assert err.value.status == 410
    url = urlsplit(started["authorization_url"])
    status, page = await _status(emulator, "GET", f"{url.path}?{url.query}")
    assert status == 410
    assert "expired" in page

    # Approved in time but exchanged too late: refused as well.
    client_id, verifier, code = await _approved_code(emulator)
    await emulator.advance_clock(601)
    status, error = await _status(
        emulator, "POST", "/agent-connect/token", data=_token_form(client_id, code, verifier)
    )
    assert status == 400
    assert "expired" in error["error"]


async def test_wrong_verifier_then_right_one_then_reuse(emulator: EmulatorHandle) -> None:
    client_id, verifier, code = await _approved_code(emulator)
    wrong, error = await _status(
        emulator,
        "POST",
        "/agent-connect/token",
        data=_token_form(client_id, code, secrets.token_urlsafe(64)),
    )
    assert (wrong, "code_verifier" in error["error"]) == (400, True)
    good, _ = await _status(
        emulator, "POST", "/agent-connect/token", data=_token_form(client_id, code, verifier)
    )
    reused, error = await _status(
        emulator, "POST", "/agent-connect/token", data=_token_form(client_id, code, verifier)
    )
    assert (good, reused) == (200, 400)
    assert "already used" in error["error"]


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ({"redirect_uri": "http://127.0.0.1:8123/auth/external/callback/"}, "redirect_uri"),
        ({"client_id": "cli_other"}, "client_id"),
        ({"grant_type": "refresh_token"}, "grant_type"),
        ({"code": "code_unknown"}, "unknown code"),
    ],
)
async def test_token_exchange_refusals(
    emulator: EmulatorHandle, override: dict[str, str], fragment: str
) -> None:
    client_id, verifier, code = await _approved_code(emulator)
    status, error = await _status(
        emulator,
        "POST",
        "/agent-connect/token",
        data=_token_form(client_id, code, verifier) | override,
    )
    assert status == 400
    assert fragment in error["error"]


async def test_token_exchange_must_be_form_encoded(emulator: EmulatorHandle) -> None:
    client_id, verifier, code = await _approved_code(emulator)
    status, _ = await _status(
        emulator, "POST", "/agent-connect/token", json=_token_form(client_id, code, verifier)
    )
    assert status == 400


async def test_revocation_refuses_runtime_tokens_and_kills_live_ones(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    agent_token = await emulator.runtime_token(installed.installation_token)
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")

    status, error = await _status(
        emulator,
        "POST",
        "/agent-connect/runtime-token",
        headers={"Authorization": f"Bearer {installed.installation_token}"},
    )
    assert status == 403
    assert "revoked" in error["error"]
    status, _ = await _status(
        emulator, "GET", "/agent/blobs/x", headers={"Authorization": f"Bearer {agent_token}"}
    )
    assert status == 401
    with pytest.raises(aiohttp.WSServerHandshakeError) as err:
        await emulator.session.ws_connect(f"{emulator.ws_url}?token={agent_token}")
    assert err.value.status == 401
    listed = await emulator.admin("GET", "/installations")
    assert listed[0]["revoked"] is True


async def test_unknown_installation_token_is_refused(emulator: EmulatorHandle) -> None:
    status, _ = await _status(
        emulator,
        "POST",
        "/agent-connect/runtime-token",
        headers={"Authorization": "Bearer pit_unknown"},
    )
    assert status == 401


async def test_runtime_tokens_expire_after_fifteen_minutes(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    agent_token = await emulator.runtime_token(installed.installation_token)
    headers = {"Authorization": f"Bearer {agent_token}"}
    status, _ = await _status(
        emulator,
        "GET",
        f"/agent/group-keys?conversation_id={installed.conversation_id}",
        headers=headers,
    )
    assert status == 200
    await emulator.advance_clock(900)
    status, _ = await _status(
        emulator,
        "GET",
        f"/agent/group-keys?conversation_id={installed.conversation_id}",
        headers=headers,
    )
    assert status == 401
    with pytest.raises(aiohttp.WSServerHandshakeError) as err:
        await emulator.session.ws_connect(f"{emulator.ws_url}?token={agent_token}")
    assert err.value.status == 401
    # The installation token still gets a fresh runtime token.
    assert await emulator.runtime_token(installed.installation_token) != agent_token


async def test_forced_runtime_token_status(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    await emulator.faults(runtime_token_status=500)
    status, _ = await _status(
        emulator,
        "POST",
        "/agent-connect/runtime-token",
        headers={"Authorization": f"Bearer {installed.installation_token}"},
    )
    assert status == 500
    await emulator.faults(runtime_token_status=None)
    assert await emulator.runtime_token(installed.installation_token)
