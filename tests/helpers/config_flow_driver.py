"""Drive the Pacerelle config flow the way the frontend and the browser do.

The frontend talks to Home Assistant's flow API over HTTP with the `HA-Frontend-Base`
header (which decides the callback URL); the browser approves in Pacerelle (the emulator's
admin API answers as the user would, and returns where the browser goes next) and comes
back through Home Assistant's OAuth2 callback view, without Home Assistant credentials.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import AUTH_CALLBACK_PATH, HEADER_FRONTEND_BASE

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.emulator import REDIRECT_URI, EmulatorHandle

FRONTEND_BASE = REDIRECT_URI.removesuffix(AUTH_CALLBACK_PATH)
FLOW_API = "/api/config/config_entries/flow"


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


STRINGS = Path(__file__).parents[2] / "custom_components" / "pacerelle" / "strings.json"


def abort_placeholders(reason: str) -> set[str]:
    """The placeholders that the config flow's abort `reason` shows (strings.json)."""
    text = json.loads(STRINGS.read_text())["config"]["abort"][reason]
    return set(re.findall(r"\{(\w+)\}", text))


def user_input(key: str, server_url: str, **fields: Any) -> dict[str, Any]:
    return {
        "connection_key": key,
        "agent_name": fields.pop("agent_name", "Home Assistant"),
        "agent_description": fields.pop("agent_description", "The house"),
        "advanced": {"server_url": server_url},
        **fields,
    }


@dataclass
class FlowDriver:
    """The frontend (authenticated API client) and the browser (no credentials)."""

    hass: HomeAssistant
    frontend: TestClient
    browser: TestClient
    emulator: EmulatorHandle
    # Everything Home Assistant sent to the frontend or the browser, to look for secrets.
    seen: list[str] = field(default_factory=list)

    async def request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        """A frontend call to the flow API; the JSON result (the status must be 200)."""
        response = await self.frontend.request(
            method, path, json=body, headers={HEADER_FRONTEND_BASE: FRONTEND_BASE}
        )
        text = await response.text()
        self.seen.append(text)
        assert response.status == 200, text
        result: dict[str, Any] = json.loads(text)
        return result

    async def start(self) -> dict[str, Any]:
        return await self.request("POST", FLOW_API, {"handler": DOMAIN})

    async def submit(self, flow_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.request("POST", f"{FLOW_API}/{flow_id}", body)

    async def fetch(self, flow_id: str) -> dict[str, Any]:
        """What the frontend does when told that an external step is done."""
        return await self.request("GET", f"{FLOW_API}/{flow_id}")

    async def answer(self, external: dict[str, Any], *, approve: bool = True) -> str:
        """The user's answer on the approval page; returns the URL the browser goes to."""
        assert external["type"] == "external", external
        request_id = query_of(external["url"])["request_id"]
        decision = "approve" if approve else "deny"
        answered = await self.emulator.admin("POST", f"/requests/{request_id}/{decision}")
        return str(answered["redirect_url"])

    async def come_back(self, redirect_url: str) -> tuple[int, str]:
        """The browser at the callback (directly, or forwarded by My Home Assistant)."""
        response = await self.browser.get(AUTH_CALLBACK_PATH, params=query_of(redirect_url))
        text = await response.text()
        self.seen.append(text)
        return response.status, text

    async def begin(self, key: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new flow up to the external step (or the form error)."""
        form = await self.start()
        key = key or await self.emulator.connect_key()
        return await self.submit(form["flow_id"], user_input(key, self.emulator.base_url, **fields))

    async def install(self, **fields: Any) -> dict[str, Any]:
        """The whole happy path; returns the final result."""
        external = await self.begin(**fields)
        status, _ = await self.come_back(await self.answer(external))
        assert status == 200
        return await self.fetch(external["flow_id"])

    def assert_never_sent(self, secret: str) -> None:
        assert all(secret not in text for text in self.seen)
