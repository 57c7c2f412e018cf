"""The agent REST API against a relay of the test's own: one retry with a new token on 401,
never a second; a blob over the cap refused before any byte is sent."""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from custom_components.pacerelle.client.errors import PacerelleApiError, PacerelleAuthError
from custom_components.pacerelle.client.limits import MAX_BLOB_BYTES
from custom_components.pacerelle.client.relay.api import AgentApi
from custom_components.pacerelle.client.relay.tokens import RuntimeTokens


@dataclass(frozen=True)
class Issued:
    agent_token: str
    expires_in: float = 3600.0


@dataclass
class Relay:
    """Accepts only the tokens in `good`; records every token and upload it saw."""

    good: set[str] = field(default_factory=set)
    seen: list[str] = field(default_factory=list)
    uploads: int = 0
    issued: int = 0

    def _token(self, request: web.Request) -> str:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        self.seen.append(token)
        return token

    async def blob(self, request: web.Request) -> web.Response:
        if self._token(request) not in self.good:
            return web.json_response({"error": "token expired"}, status=401)
        return web.Response(body=b"ciphertext of " + request.match_info["blob"].encode())

    async def upload(self, request: web.Request) -> web.Response:
        self.uploads += 1
        return web.json_response({"id": "b-1"})

    async def fetch(self) -> Issued:
        self.issued += 1
        return Issued(f"token-{self.issued}")


@pytest.fixture
async def relay(socket_enabled: None) -> AsyncIterator[tuple[Relay, str]]:
    relay = Relay()
    app = web.Application()
    app.router.add_get("/agent/blobs/{blob}", relay.blob)
    app.router.add_post("/agent/blobs", relay.upload)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield relay, str(server.make_url("/"))
    await server.close()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_a_refused_token_is_replaced_once(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    server, url = relay
    server.good = {"token-2"}
    tokens = RuntimeTokens(server.fetch)
    api = AgentApi(session, url, tokens)
    assert await api.download_blob("b/1") == b"ciphertext of b/1"
    assert server.seen == ["token-1", "token-2"]
    current = tokens.current
    assert current is not None
    assert current.token == "token-2"
    # The new token is kept: the next call needs no renewal.
    await api.download_blob("b-2")
    assert server.seen[-1] == "token-2"
    assert server.issued == 2


async def test_a_second_refusal_reaches_the_caller(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    server, url = relay
    api = AgentApi(session, url, RuntimeTokens(server.fetch))
    with pytest.raises(PacerelleAuthError) as caught:
        await api.download_blob("b-1")
    assert caught.value.status == 401
    assert server.seen == ["token-1", "token-2"]  # one retry, not a loop


async def test_a_blob_over_the_cap_is_refused_before_upload(
    relay: tuple[Relay, str], session: aiohttp.ClientSession
) -> None:
    server, url = relay
    api = AgentApi(session, url, RuntimeTokens(server.fetch))
    with pytest.raises(PacerelleApiError) as caught:
        await api.upload_blob(bytes(MAX_BLOB_BYTES + 1))
    assert caught.value.status == 413
    assert (server.uploads, server.issued) == (0, 0)
    assert await api.upload_blob(b"small") == {"id": "b-1"}
    assert server.uploads == 1
