"""What the chat page tests share: Home Assistant's side of Agent Connect played with plain
HTTP calls (as the integration does with a pasted key), and the reference agent's next
message, decrypted."""

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from playwright.async_api import Page, expect

from tests.emulator.reference_agent import ReferenceAgent
from tests.emulator.state import Json
from tests.helpers.emulator import REDIRECT_URI, EmulatorHandle, Installed

AGENT_NAME = "Kitchen assistant"
AGENT_DESCRIPTION = "Home Assistant in the kitchen"
STATE = "browser-state"
CONNECT_KEY = re.compile(r"^pck_[\w-]{43}$")


async def create_connect_key(page: Page) -> str:
    """Click "Create connection key" on the chat page; the key, once the page shows it (the
    click answers before the page has it from the emulator)."""
    await page.get_by_role("button", name="Create connection key").click()
    key = page.locator("#key")
    await expect(key).to_have_text(CONNECT_KEY)
    return await key.inner_text()


@dataclass(frozen=True)
class Started:
    """An authorization request as Home Assistant starts it, with what it keeps secret."""

    client_id: str
    verifier: str
    request_id: str


async def start_request(emulator: EmulatorHandle, connect_key: str) -> Started:
    """What the integration does with a pasted key: register, then ask for an installation."""
    client_id = await emulator.register_client()
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode()).digest()
    started = await emulator.call(
        "POST",
        "/agent-connect/requests",
        headers={"Authorization": f"Bearer {connect_key}"},
        json={
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "state": STATE,
            "code_challenge": base64.urlsafe_b64encode(digest).decode().rstrip("="),
            "code_challenge_method": "S256",
            "agent_name": AGENT_NAME,
            "agent_description": AGENT_DESCRIPTION,
            "scope": "myagents:agent-connect",
        },
    )
    return Started(client_id, verifier, started["request_id"])


async def exchange(emulator: EmulatorHandle, started: Started, callback_url: str) -> Installed:
    """Home Assistant's callback: the code from the approval, traded for the installation."""
    query = parse_qs(urlsplit(callback_url).query)
    assert query["state"] == [STATE]
    token = await emulator.call(
        "POST",
        "/agent-connect/token",
        data={
            "grant_type": "authorization_code",
            "client_id": started.client_id,
            "redirect_uri": REDIRECT_URI,
            "code": query["code"][0],
            "code_verifier": started.verifier,
        },
    )
    return Installed(
        started.client_id,
        token["agent_id"],
        token["owner_id"],
        token["conversation_id"],
        token["installation_token"],
    )


async def next_message(agent: ReferenceAgent) -> tuple[Json, str]:
    """The next MSG the agent gets, acknowledged, with its decrypted plaintext."""
    while True:
        frame = await agent.frame()
        if frame.get("type") == "MSG":
            plaintext = agent.open(frame)
            await agent.ack(frame)
            return frame, plaintext
