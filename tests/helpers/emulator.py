"""Pytest fixtures that run the emulator as a real server on a free loopback port.

Enable with `pytest_plugins = ["tests.helpers.emulator"]` in tests/conftest.py.
"""

import asyncio
import base64
import hashlib
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from aiohttp import web

from tests.emulator import EmulatorConfig, create_app
from tests.emulator.access_log import RedactingAccessLogger
from tests.emulator.context import EMULATOR, Emulator
from tests.emulator.reference_agent import ReferenceAgent

REDIRECT_URI = "http://127.0.0.1:8123/auth/external/callback"


class AdminError(AssertionError):
    """The emulator answered an admin or API call with an error status."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Installed:
    """An agent installed through the whole Agent Connect flow."""

    client_id: str
    agent_id: str
    owner_id: str
    conversation_id: str
    installation_token: str


@dataclass
class EmulatorHandle:
    """A running emulator: its URLs, its in-process object, and admin helpers."""

    base_url: str
    app: web.Application
    session: aiohttp.ClientSession

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http", "ws", 1) + "/ws/agent"

    @property
    def emulator(self) -> Emulator:
        return self.app[EMULATOR]

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """An HTTP call that must succeed; returns the JSON body (or None)."""
        async with self.session.request(method, self.base_url + path, **kwargs) as response:
            body = await response.json() if response.content_type == "application/json" else None
            if response.status >= 400:
                raise AdminError(response.status, body)
            return body

    async def admin(self, method: str, path: str, body: Any = None) -> Any:
        return await self.call(method, f"/_emulator{path}", json=body)

    async def connect_key(self, user_id: str | None = None) -> str:
        body = {"user_id": user_id} if user_id else {}
        return str((await self.admin("POST", "/connect-keys", body))["connect_key"])

    async def register_client(self, redirect_uri: str = REDIRECT_URI) -> str:
        body = {"client_name": "Home Assistant", "redirect_uris": [redirect_uri]}
        return str((await self.call("POST", "/oauth/register", json=body))["client_id"])

    async def install(self, *, user_id: str | None = None, name: str = "Home") -> Installed:
        """Register, start, approve and exchange: the flow an integration runs."""
        client_id = await self.register_client()
        verifier = secrets.token_urlsafe(64)
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        key = await self.connect_key(user_id)
        started = await self.call(
            "POST",
            "/agent-connect/requests",
            headers={"Authorization": f"Bearer {key}"},
            json={
                "client_id": client_id,
                "redirect_uri": REDIRECT_URI,
                "state": "st",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "agent_name": name,
                "agent_description": "Home Assistant",
                "scope": "myagents:agent-connect",
            },
        )
        approved = await self.admin("POST", f"/requests/{started['request_id']}/approve")
        code = parse_qs(urlsplit(approved["redirect_url"]).query)["code"][0]
        token = await self.call(
            "POST",
            "/agent-connect/token",
            data={
                "grant_type": "authorization_code",
                "client_id": client_id,
                "redirect_uri": REDIRECT_URI,
                "code": code,
                "code_verifier": verifier,
            },
        )
        return Installed(
            client_id,
            token["agent_id"],
            token["owner_id"],
            token["conversation_id"],
            token["installation_token"],
        )

    async def runtime_token(self, installation_token: str) -> str:
        body = await self.call(
            "POST",
            "/agent-connect/runtime-token",
            headers={"Authorization": f"Bearer {installation_token}"},
        )
        return str(body["agent_token"])

    async def agent(self, installed: Installed, *, publish: bool = True) -> ReferenceAgent:
        """A reference agent for `installed`, with a fresh runtime token and keys published."""
        token = await self.runtime_token(installed.installation_token)
        agent = ReferenceAgent(self.session, self.base_url, installed.agent_id, token)
        if publish:
            await agent.publish()
        return agent

    async def send(self, conversation_id: str, **body: Any) -> str:
        result = await self.admin("POST", f"/conversations/{conversation_id}/send", body)
        return str(result["message_id"])

    async def inbox(self, conversation_id: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await self.admin(
            "GET", f"/conversations/{conversation_id}/inbox"
        )
        return result

    async def wait_inbox(
        self, conversation_id: str, count: int, within: float = 10.0
    ) -> list[dict[str, Any]]:
        """The inbox once it holds at least `count` messages."""
        async with asyncio.timeout(within):
            while True:
                entries = await self.inbox(conversation_id)
                if len(entries) >= count:
                    return entries
                await asyncio.sleep(0.02)

    async def wait_agent(
        self, agent_id: str, until: Callable[[dict[str, Any]], bool], within: float = 10.0
    ) -> dict[str, Any]:
        """The agent's status (GET /_emulator/agents/{id}) once `until` holds for it."""
        async with asyncio.timeout(within):
            while True:
                status: dict[str, Any] = await self.admin("GET", f"/agents/{agent_id}")
                if until(status):
                    return status
                await asyncio.sleep(0.02)

    async def faults(self, **body: Any) -> Any:
        return await self.admin("POST", "/faults", body)

    async def advance_clock(self, seconds: float) -> None:
        await self.admin("POST", "/clock", {"advance_seconds": seconds})


def _loopback_socket(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


@asynccontextmanager
async def running_emulator(
    config: EmulatorConfig | None = None, port: int = 0
) -> AsyncIterator[EmulatorHandle]:
    """Serve an emulator over TCP on 127.0.0.1 (a free port unless given) until exit."""
    sock = _loopback_socket(port)
    bound = sock.getsockname()[1]
    config = replace(config or EmulatorConfig(), host="127.0.0.1", port=bound)
    app = create_app(config)
    runner = web.AppRunner(app, shutdown_timeout=1, access_log_class=RedactingAccessLogger)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        async with aiohttp.ClientSession() as session:
            yield EmulatorHandle(f"http://127.0.0.1:{bound}", app, session)
    finally:
        await runner.cleanup()
        sock.close()


@pytest.fixture
async def emulator(socket_enabled: None) -> AsyncIterator[EmulatorHandle]:
    """A fresh emulator with Pacerelle's defaults, state in memory.

    `socket_enabled` lifts pytest-socket's ban; connections stay limited to 127.0.0.1.
    """
    async with running_emulator() as handle:
        yield handle
