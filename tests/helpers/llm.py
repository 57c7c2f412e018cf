"""Helpers of the LLM API and Assist bridge tests: the tools, tool calls and held requests."""

from typing import Any

from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm

from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

# The Pacerelle API's tools (the MCP server offers the same).
TOOLS = {
    "get_status",
    "wait_for_messages",
    "send_message",
    "send_widget",
    "mark_processed",
    "get_history",
    "save_checkpoint",
    "get_checkpoints",
    "get_current_conversation",
    "get_pending_widget",
}
LLM_CONTEXT = llm.LLMContext(
    platform="test", context=Context(), language="en", assistant="conversation", device_id=None
)


async def call(hass: HomeAssistant, tool: str, **args: Any) -> Any:
    """Call a tool of the Pacerelle API as a conversation agent would; its data."""
    api = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    result = await api.async_call_tool(llm.ToolInput(tool_name=tool, tool_args=args))
    assert not result.error
    return result.data


async def human_says(
    emulator: EmulatorHandle, runtime: PacerelleRuntime, conversation_id: str, text: str
) -> str:
    """The owner's device sends `text`; returns once the agent holds it as pending."""
    message_id = await emulator.send(conversation_id, text=text)
    await held(runtime, message_id)
    return message_id


async def owner_asks(hass: HomeAssistant, emulator: EmulatorHandle, text: str) -> tuple[Agent, str]:
    """An agent started, and the owner's `text` held by it as pending; (agent, message id)."""
    agent = await start_agent(hass, emulator)
    return agent, await human_says(emulator, agent.runtime, agent.conversation_id, text)


async def held(runtime: PacerelleRuntime, message_id: str) -> None:
    """Returns once the agent holds `message_id` as a pending request."""
    await wait_until(
        lambda: any(r.message_id == message_id for r in runtime.agent.pending_requests())
    )
