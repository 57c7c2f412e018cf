"""JSON over HTTP against a real aiohttp server on loopback: errors mapped precisely."""

from collections.abc import AsyncIterator

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
from custom_components.pacerelle.client.limits import MAX_ANSWER_BYTES
from custom_components.pacerelle.client.relay.http import request_json


async def echo(request: web.Request) -> web.Response:
    return web.json_response(
        {
            "auth": request.headers.get("Authorization"),
            "json": await request.json()
            if request.can_read_body and request.content_type == "application/json"
            else None,
            "form": dict(await request.post())
            if request.content_type.endswith("urlencoded")
            else None,
        }
    )


def fixed(status: int, body: bytes, content_type: str = "application/json"):
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, body=body, content_type=content_type)

    return handler


@pytest.fixture
async def server(socket_enabled: None) -> AsyncIterator[TestServer]:
    app = web.Application()
    app.router.add_post("/echo", echo)
    app.router.add_get("/revoked", fixed(401, b'{"error": "installation revoked"}'))
    app.router.add_get("/forbidden", fixed(403, b"{}"))
    app.router.add_get("/broken", fixed(500, b"<html>oops</html>", "text/html"))
    app.router.add_get("/garbage", fixed(200, b"not json", "text/plain"))
    app.router.add_get("/list", fixed(200, b"[1, 2]"))
    app.router.add_get("/empty", fixed(204, b""))
    app.router.add_get("/huge", fixed(200, b" " * (MAX_ANSWER_BYTES + 1) + b"{}"))
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield server
    await server.close()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_json_and_token_are_sent(server: TestServer, session: aiohttp.ClientSession) -> None:
    body = await request_json(
        session, "POST", str(server.make_url("/echo")), token="t0k", json_body={"a": 1}
    )
    assert body == {"auth": "Bearer t0k", "json": {"a": 1}, "form": None}


async def test_form_is_sent(server: TestServer, session: aiohttp.ClientSession) -> None:
    body = await request_json(session, "POST", str(server.make_url("/echo")), form={"code": "x"})
    assert body["form"] == {"code": "x"}
    assert body["auth"] is None


async def test_refused_credentials(server: TestServer, session: aiohttp.ClientSession) -> None:
    with pytest.raises(PacerelleAuthError) as err:
        await request_json(session, "GET", str(server.make_url("/revoked")))
    assert (err.value.status, err.value.message) == (401, "installation revoked")
    with pytest.raises(PacerelleAuthError) as err:
        await request_json(session, "GET", str(server.make_url("/forbidden")))
    assert err.value.message == "HTTP 403"


async def test_server_error_is_an_api_error(
    server: TestServer, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(PacerelleApiError) as err:
        await request_json(session, "GET", str(server.make_url("/broken")))
    assert err.value.status == 500
    assert not isinstance(err.value, PacerelleAuthError)


@pytest.mark.parametrize("path", ["/garbage", "/list", "/huge"])
async def test_garbage_is_a_response_error(
    server: TestServer, session: aiohttp.ClientSession, path: str
) -> None:
    with pytest.raises(PacerelleResponseError):
        await request_json(session, "GET", str(server.make_url(path)))


async def test_empty_body_is_an_empty_object(
    server: TestServer, session: aiohttp.ClientSession
) -> None:
    assert await request_json(session, "GET", str(server.make_url("/empty"))) == {}


async def test_unreachable_server(socket_enabled: None, session: aiohttp.ClientSession) -> None:
    with pytest.raises(PacerelleConnectionError):
        await request_json(session, "GET", "http://127.0.0.1:9/nothing-listens-here")
