"""A conversation agent whose model is a script (no network), using the Pacerelle API.

Its tool calls go through Home Assistant's ChatLog exactly as an LLM integration's do.
"""

import inspect
from collections.abc import Callable
from typing import Any, Literal

from homeassistant.components import conversation
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import chat_session, llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

type Results = list[conversation.ToolResultContent]
# 2026.11 wants the caller's context for a chat session (deprecated without: breaks in
# 2027.5); 2026.10 takes none.
_SESSION_TAKES_CONTEXT = (
    "context" in inspect.signature(chat_session.async_get_chat_session).parameters
)
# Given the user's text and the tool results so far: the next tool calls, or the answer.
type Script = Callable[[str, Results], list[llm.ToolInput] | str]


class ScriptedModelAgent(conversation.AbstractConversationAgent):
    """An LLM conversation agent whose model is a script, using the Pacerelle API."""

    def __init__(self, hass: HomeAssistant, script: Script) -> None:
        self.hass = hass
        self.script = script
        self.prompts: list[str] = []
        self.conversation_ids: list[str | None] = []
        self.results: Results = []

    @property
    def supported_languages(self) -> Literal["*"]:
        return MATCH_ALL

    @staticmethod
    def _session_context(user_input: conversation.ConversationInput) -> dict[str, Any]:
        return {"context": user_input.context} if _SESSION_TAKES_CONTEXT else {}

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        self.conversation_ids.append(user_input.conversation_id)
        with (
            chat_session.async_get_chat_session(
                self.hass, user_input.conversation_id, **self._session_context(user_input)
            ) as session,
            conversation.async_get_chat_log(self.hass, session, user_input) as chat_log,
        ):
            await chat_log.async_provide_llm_data(
                user_input.as_llm_context("test"), "pacerelle", None, None
            )
            self.prompts.append(chat_log.content[0].content)
            results: Results = []
            while not isinstance(step := self.script(user_input.text, results), str):
                content = conversation.AssistantContent(agent_id="test", tool_calls=step)
                results.extend([r async for r in chat_log.async_add_assistant_content(content)])
            chat_log.async_add_assistant_content_without_tools(
                conversation.AssistantContent(agent_id="test", content=step)
            )
            self.results.extend(results)
            return conversation.async_get_result_from_chat_log(user_input, chat_log)


async def setup_conversation(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})


def install_model(hass: HomeAssistant, script: Script) -> tuple[str, ScriptedModelAgent]:
    entry = MockConfigEntry(domain="test", title="Scripted model")
    entry.add_to_hass(hass)
    agent = ScriptedModelAgent(hass, script)
    conversation.async_set_agent(hass, entry, agent)
    return entry.entry_id, agent
