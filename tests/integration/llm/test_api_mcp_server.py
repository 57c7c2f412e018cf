"""The Pacerelle API through Home Assistant's MCP Server integration, over its HTTP endpoint.

What an external MCP host does: JSON-RPC posts to /api/mcp (the config entry serves the
Pacerelle API), with the emulator's human on the other side.
"""

import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.llm.api import API_PROMPT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import TOOLS, human_says

type ClientFactory = Callable[[], Coroutine[Any, Any, TestClient]]


class McpHost:
    """A stateless MCP client over Home Assistant's streamable HTTP endpoint."""

    def __init__(self, client: TestClient) -> None:
        self._client = client
        self._next_id = 0

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._next_id += 1
        body = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}}
        response = await self._client.post(
            "/api/mcp", json=body, headers={"Accept": "application/json, text/event-stream"}
        )
        assert response.status == 200, await response.text()
        answer = await response.json()
        assert "error" not in answer, answer
        return answer["result"]

    async def call(self, tool: str, **arguments: Any) -> tuple[bool, Any]:
        """(isError, the tool's JSON result or error text)."""
        result = await self.request("tools/call", {"name": tool, "arguments": arguments})
        text = result["content"][0]["text"]
        if result.get("isError"):
            return True, text
        return False, json.loads(text)


@pytest.fixture
async def mcp_server(hass: HomeAssistant) -> None:
    """Home Assistant's MCP Server, configured to serve the Pacerelle API."""
    assert await async_setup_component(hass, "homeassistant", {})
    entry = MockConfigEntry(
        domain="mcp_server",
        data={CONF_LLM_HASS_API: ["pacerelle"], "require_admin": True, "all_llm_apis": False},
        version=1,
        minor_version=3,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)


@pytest.mark.usefixtures("mcp_server")
async def test_mcp_host_holds_a_conversation_through_pacerelle(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_client: ClientFactory
) -> None:
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    # The HTTP server starts with the client: every view is registered by now.
    mcp_host = McpHost(await hass_client())

    tools = {tool["name"]: tool for tool in (await mcp_host.request("tools/list"))["tools"]}
    assert set(tools) == TOOLS
    timeout = tools["wait_for_messages"]["inputSchema"]["properties"]["timeoutMs"]
    assert (timeout["minimum"], timeout["maximum"], timeout["default"]) == (0, 30000, 25000)
    assert tools["send_message"]["inputSchema"]["required"] == ["text"]
    assert tools["get_status"]["annotations"]["readOnlyHint"] is True
    [prompt] = (await mcp_host.request("prompts/list"))["prompts"]
    assert prompt["name"] == "Pacerelle"
    got = await mcp_host.request("prompts/get", {"name": "Pacerelle"})
    assert got["messages"][0]["content"]["text"] == API_PROMPT

    message_id = await human_says(emulator, runtime, installed.conversation_id, "Garage open?")
    error, waited = await mcp_host.call("wait_for_messages", timeoutMs=0)
    assert not error
    assert [m["message_id"] for m in waited["messages"]] == [message_id]
    error, sent = await mcp_host.call(
        "send_message", text="No, it is closed.", sourceMessageId=message_id
    )
    assert not error
    [received] = await emulator.wait_inbox(installed.conversation_id, 1)
    assert (received["message_id"], received["text"]) == (sent["message_id"], "No, it is closed.")
    error, _ = await mcp_host.call("mark_processed", messageId=message_id, note="answered")
    assert not error
    error, status = await mcp_host.call("get_status")
    assert (error, status["pending"], status["connection"]) == (False, 0, "connected")

    # Bad arguments and refusals come back as tool errors the host can show its model.
    error, text = await mcp_host.call("wait_for_messages", timeoutMs=30001)
    assert error
    assert "30000" in text  # the MCP SDK checks the schema before the tool does
    error, text = await mcp_host.call("mark_processed", messageId=message_id)
    assert error
    assert "no such request" in text
