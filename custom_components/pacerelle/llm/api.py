"""The "Pacerelle" LLM API: the tools of Pacerelle's MCP server for Home Assistant.

Registered once by the integration. A conversation agent configured with it holds
conversations through Pacerelle; Home Assistant's MCP Server integration offers the same
tools (and this prompt, as its prompt) to external MCP hosts. Tool names, arguments and
limits are the MCP server's; see llm/tools.py for how a tool addresses one of several agents.
"""

from collections.abc import Callable
from typing import Final, override

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import llm

from ..callers import async_limited_user
from ..const import DOMAIN
from .read_tools import (
    GetCheckpointsTool,
    GetCurrentConversationTool,
    GetHistoryTool,
    GetPendingWidgetTool,
    GetStatusTool,
)
from .send_tools import MarkProcessedTool, SaveCheckpointTool, SendMessageTool, SendWidgetTool
from .tools import describe_agents, loaded_agents
from .wait_tool import WaitForMessagesTool

LLM_API_ID: Final = DOMAIN
LLM_API_NAME: Final = "Pacerelle"

# What the MCP server's `start_pacerelle` prompt tells the assistant.
API_PROMPT: Final = (
    "You are an agent on Pacerelle, an end-to-end encrypted messenger: people send you "
    "requests and you answer them with these tools. First call get_status and "
    "get_checkpoints to see the connection and any work to resume. Then keep going: call "
    "wait_for_messages (without afterCursor when resuming, so no unfinished request is "
    "skipped), handle each request, answer it with send_message or send_widget giving its "
    "message_id as sourceMessageId, call mark_processed once it is fully handled, and wait "
    "again. Save a checkpoint with save_checkpoint when work on a request spans several "
    "steps, and mark it completed when done. get_current_conversation and "
    "get_pending_widget read the latest conversation and widget answer."
)

NOT_ADMIN_PROMPT: Final = (
    "The Pacerelle tools are for Home Assistant administrators, and this conversation's user "
    "is not one: no Pacerelle tool is available. Say so if asked about Pacerelle messages."
)


class PacerelleLlmApi(llm.API):
    """Every Pacerelle tool, on whichever agents are loaded when an instance is made."""

    @override
    async def async_get_api_instance(self, llm_context: llm.LLMContext) -> llm.APIInstance:
        if await async_limited_user(self.hass, llm_context.context) is not None:
            # The tools read what people wrote: none for a user who is not an administrator.
            return llm.APIInstance(
                api=self, api_prompt=NOT_ADMIN_PROMPT, llm_context=llm_context, tools=[]
            )
        return llm.APIInstance(
            api=self,
            api_prompt=_prompt(self.hass),
            llm_context=llm_context,
            tools=[
                GetStatusTool(),
                WaitForMessagesTool(),
                SendMessageTool(),
                SendWidgetTool(),
                MarkProcessedTool(),
                GetHistoryTool(),
                SaveCheckpointTool(),
                GetCheckpointsTool(),
                GetCurrentConversationTool(),
                GetPendingWidgetTool(),
            ],
        )


def _prompt(hass: HomeAssistant) -> str:
    agents = loaded_agents(hass)
    if len(agents) > 1:
        return (
            f"{API_PROMPT}\nSeveral Pacerelle agents are set up: {describe_agents(agents)}. "
            "Pass the agent argument (its id or name) to every tool."
        )
    if not agents:
        return f"{API_PROMPT}\nNo Pacerelle agent is loaded right now: the tools will fail."
    return API_PROMPT


@callback
def async_register_llm_api(hass: HomeAssistant) -> Callable[[], None]:
    """Register the API (once per Home Assistant run); the callable unregisters it."""
    return llm.async_register_api(
        hass, PacerelleLlmApi(hass=hass, id=LLM_API_ID, name=LLM_API_NAME)
    )
