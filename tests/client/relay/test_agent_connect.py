"""The Agent Connect client against the running emulator: every call and its refusals."""

import base64
import dataclasses
import hashlib
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from custom_components.pacerelle.client.errors import (
    PacerelleApiError,
    PacerelleAuthError,
    PacerelleConnectionError,
    PacerelleResponseError,
)
from custom_components.pacerelle.client.relay.agent_connect import (
    AgentConnect,
    Pkce,
    code_challenge,
    request_runtime_token,
)
from tests.helpers.emulator import REDIRECT_URI, EmulatorHandle


def test_pkce_pair_follows_rfc_7636() -> None:
    pkce = Pkce.new()
    # 64 random bytes, URL-safe base64 without padding: 86 characters.
    assert len(pkce.verifier) == 86
    assert set(pkce.verifier) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    digest = hashlib.sha256(pkce.verifier.encode()).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).decode().rstrip("=")
    assert len(pkce.challenge) == 43
    assert Pkce.new().verifier != pkce.verifier
    assert pkce.verifier not in repr(pkce)
    # RFC 7636 appendix B.
    assert (
        code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


async def _begin(emulator: EmulatorHandle, client_id: str, key: str | None = None) -> AgentConnect:
    return await AgentConnect.begin(
        emulator.session,
        emulator.base_url,
        connection_key=key or await emulator.connect_key(),
        client_id=client_id,
        redirect_uri=REDIRECT_URI,
        state="flow-state",
        agent_name="Home Assistant",
        agent_description="The house",
    )


def _callback_query(redirect_url: str) -> dict[str, str]:
    assert redirect_url.startswith(REDIRECT_URI + "?")
    return {name: values[0] for name, values in parse_qs(urlsplit(redirect_url).query).items()}


async def test_whole_flow_and_runtime_token(emulator: EmulatorHandle) -> None:
    session = emulator.session
    client_id = await AgentConnect.register(
        session, emulator.base_url + "/", client_name="Home Assistant", redirect_uri=REDIRECT_URI
    )
    pending = await _begin(emulator, client_id)
    assert pending.expires_in == 600
    assert pending.authorization_url.startswith(emulator.base_url + "/agent-connect/authorize?")
    approved = await emulator.admin("POST", f"/requests/{pending.request_id}/approve")
    query = _callback_query(approved["redirect_url"])
    assert query["state"] == "flow-state"

    installation = await pending.exchange(session, query["code"])
    [record] = await emulator.admin("GET", "/installations")
    assert installation.agent_id == record["agent_id"]
    assert installation.owner_id == record["owner_id"] == "usr_demo"
    assert installation.conversation_id == record["conversation_id"]
    assert installation.installation_token not in repr(installation)

    runtime = await request_runtime_token(
        session, emulator.base_url, installation.installation_token
    )
    assert (runtime.agent_id, runtime.owner_id, runtime.conversation_id) == (
        installation.agent_id,
        installation.owner_id,
        installation.conversation_id,
    )
    assert runtime.expires_in == 900
    assert runtime.agent_token not in repr(runtime)
    # The token works for the agent API.
    status, _ = await _get_group_keys(session, emulator, runtime.agent_token)
    assert status == 400  # authenticated; only the missing conversation id is refused

    await emulator.admin("POST", f"/installations/{installation.agent_id}/revoke")
    with pytest.raises(PacerelleAuthError) as err:
        await request_runtime_token(session, emulator.base_url, installation.installation_token)
    assert err.value.status == 403


async def _get_group_keys(
    session: aiohttp.ClientSession, emulator: EmulatorHandle, token: str
) -> tuple[int, object]:
    async with session.get(
        emulator.base_url + "/agent/group-keys", headers={"Authorization": f"Bearer {token}"}
    ) as response:
        return response.status, await response.json()


async def test_connection_key_is_one_use(emulator: EmulatorHandle) -> None:
    client_id = await emulator.register_client()
    key = await emulator.connect_key()
    await _begin(emulator, client_id, key)
    with pytest.raises(PacerelleAuthError) as err:
        await _begin(emulator, client_id, key)
    assert err.value.status == 401
    with pytest.raises(PacerelleAuthError):
        await _begin(emulator, client_id, "pck_unknown")


async def test_unknown_client_is_refused_and_key_stays_usable(emulator: EmulatorHandle) -> None:
    key = await emulator.connect_key()
    with pytest.raises(PacerelleApiError) as err:
        await _begin(emulator, "cli_unknown", key)
    assert err.value.status == 400
    assert not isinstance(err.value, PacerelleAuthError)
    await _begin(emulator, await emulator.register_client(), key)


async def test_refused_exchanges(emulator: EmulatorHandle) -> None:
    client_id = await emulator.register_client()
    pending = await _begin(emulator, client_id)
    approved = await emulator.admin("POST", f"/requests/{pending.request_id}/approve")
    code = _callback_query(approved["redirect_url"])["code"]

    with pytest.raises(PacerelleApiError) as err:
        await dataclasses.replace(pending, pkce=Pkce.new()).exchange(emulator.session, code)
    assert err.value.status == 400
    assert "code_verifier" in err.value.message
    await pending.exchange(emulator.session, code)
    with pytest.raises(PacerelleApiError, match="already used"):
        await pending.exchange(emulator.session, code)


@pytest.fixture
async def garbage_url(socket_enabled: None) -> AsyncIterator[str]:
    """A server that answers every request with a web page (the emulator cannot)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>Welcome</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url(""))
    await server.close()


async def test_unreachable_and_garbage(emulator: EmulatorHandle, garbage_url: str) -> None:
    with pytest.raises(PacerelleConnectionError):
        await AgentConnect.register(
            emulator.session,
            "http://127.0.0.1:9",
            client_name="Home Assistant",
            redirect_uri=REDIRECT_URI,
        )
    # A web page where the API should be is a broken server, not a refusal.
    with pytest.raises(PacerelleResponseError):
        await AgentConnect.register(
            emulator.session, garbage_url, client_name="x", redirect_uri=REDIRECT_URI
        )
    await emulator.faults(route_status={"/agent-connect/requests": 502})
    with pytest.raises(PacerelleApiError) as err:
        await _begin(emulator, await emulator.register_client())
    assert err.value.status == 502
