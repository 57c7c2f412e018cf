"""Plain http is refused for a server off this machine: tokens never cross a network unencrypted.

The attack: a user is talked into (or mistypes) an http:// server URL on the network. An
eavesdropper there, played by an aiohttp server of the test's own on this machine's
non-loopback address, answers like Pacerelle and records every credential it is sent.
"""

import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import pytest_socket
from aiohttp import web
from aiohttp.test_utils import TestServer
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.server_url import (
    InsecureServerUrlError,
    checked_server_url,
    normalize_server_url,
)
from tests.helpers.config_flow_driver import FlowDriver, user_input

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


PROBE = "198.51.100.1"  # TEST-NET-2: a UDP connect only picks the route, sends nothing


def _network_address() -> str | None:
    """This machine's address on its network (no packet is sent), if it has one."""
    pytest_socket.socket_allow_hosts(["127.0.0.1", PROBE])
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((PROBE, 9))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


@dataclass
class Eavesdropper:
    url: str
    credentials: list[str] = field(default_factory=list)


@pytest.fixture
async def eavesdropper(socket_enabled: None) -> AsyncIterator[Eavesdropper]:
    address = _network_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    # The harness lets sockets reach 127.0.0.1 only; the eavesdropper is on the network.
    pytest_socket.socket_allow_hosts(["127.0.0.1", address])

    async def answer(request: web.Request) -> web.Response:
        spy.credentials.append(request.headers.get("Authorization", ""))
        if request.path == "/oauth/register":
            return web.json_response({"client_id": "cli_eve"})
        return web.json_response({"error": "nothing here"}, status=400)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    server = TestServer(app, host=address)
    await server.start_server()
    spy = Eavesdropper(f"http://{address}:{server.port}")
    yield spy
    await server.close()
    pytest_socket.socket_allow_hosts(["127.0.0.1"])


async def test_plain_http_to_the_network_is_refused_before_anything_is_sent(
    hass: HomeAssistant, driver: FlowDriver, eavesdropper: Eavesdropper
) -> None:
    form = await driver.start()
    key = await driver.emulator.connect_key()
    result = await driver.submit(form["flow_id"], user_input(key, eavesdropper.url))
    # Nothing reached the eavesdropper: neither a request nor the connection key.
    assert eavesdropper.credentials == []
    assert (result["type"], result["errors"]) == ("form", {"base": "insecure_server_url"})
    # The same form then accepts Pacerelle's https (here: the emulator on loopback).
    result = await driver.submit(form["flow_id"], user_input(key, driver.emulator.base_url))
    assert result["type"] == "external"


@pytest.mark.parametrize(
    "url",
    [
        "http://192.168.1.20:8080",  # a home network (RFC 1918)
        "http://10.0.0.5",
        "http://pacerelle.local:8080",  # mDNS
        "http://api.pacerelle.com",
        "http://[fe80::1]:8080",
        "http://127.0.0.1.example.com",  # looks like loopback, is not
    ],
)
def test_cleartext_off_loopback_is_refused(url: str) -> None:
    with pytest.raises(InsecureServerUrlError):
        checked_server_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://api.pacerelle.com",
        "https://192.168.1.20:8443/",
        "http://127.0.0.1:8080",
        "http://127.8.9.10",
        "http://[::1]:8080",
        "http://LOCALHOST:8080",
    ],
)
def test_https_anywhere_and_http_on_loopback_are_accepted(url: str) -> None:
    assert checked_server_url(url) == url.rstrip("/")


def test_server_url_is_normalized() -> None:
    assert normalize_server_url(" https://api.pacerelle.com/ ") == "https://api.pacerelle.com"
    assert normalize_server_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    for bad in ("api.pacerelle.com", "ftp://x", "https://x/?a=1", "https://x/#f", "https://"):
        with pytest.raises(ValueError, match=r"URL|query"):
            normalize_server_url(bad)
