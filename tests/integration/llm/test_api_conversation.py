"""A conversation agent configured with the Pacerelle API, as an LLM integration runs one.

The model is a script (no network): its tool calls go through Home Assistant's ChatLog
exactly as an LLM integration's do, with the emulator's human on the other side.
"""

import pytest
from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm

from custom_components.pacerelle.assist.bridge import ha_conversation_id
from custom_components.pacerelle.llm.api import API_PROMPT
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import human_says
from tests.helpers.runtime import wait_until
from tests.helpers.scripted_model import Results, install_model, setup_conversation


@pytest.fixture
async def conversation_ready(hass: HomeAssistant) -> None:
    await setup_conversation(hass)


def answer_everything(_text: str, results: Results) -> list[llm.ToolInput] | str:
    """Status and checkpoints, wait, answer and mark each request, then say what was done."""
    if not results:
        return [llm.ToolInput("get_status", {}), llm.ToolInput("get_checkpoints", {})]
    if len(results) == 2:
        return [llm.ToolInput("wait_for_messages", {"timeoutMs": 0})]
    if len(results) == 3:
        calls = []
        for message in results[2].result.data["messages"]:
            source = {"sourceMessageId": message["message_id"]}
            calls.append(llm.ToolInput("send_message", {"text": "It is 21 °C inside.", **source}))
            calls.append(llm.ToolInput("mark_processed", {"messageId": message["message_id"]}))
        return calls
    if len(results) == 5:
        # A model's mistake: marking the request again.
        marked = results[4].result.data["processed"]["message_id"]
        return [llm.ToolInput("mark_processed", {"messageId": marked})]
    return f"Answered {sum(r.tool_name == 'send_message' for r in results)} request(s)."


@pytest.mark.usefixtures("conversation_ready")
async def test_llm_agent_holds_a_conversation_through_pacerelle(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    asked = await human_says(emulator, runtime, installed.conversation_id, "How warm is it?")
    agent_id, model = install_model(hass, answer_everything)

    result = await conversation.async_converse(
        hass, "Handle my Pacerelle requests", None, Context(), agent_id=agent_id
    )
    assert result.response.speech["plain"]["speech"] == "Answered 1 request(s)."
    assert API_PROMPT in model.prompts[0]
    [reply] = await emulator.wait_inbox(installed.conversation_id, 1)
    assert (reply["text"], reply["reply_to_message_id"]) == ("It is 21 °C inside.", asked)
    assert runtime.status.pending == 0
    names = [(r.tool_name, r.result.error) for r in model.results]
    assert names == [
        ("get_status", False),
        ("get_checkpoints", False),
        ("wait_for_messages", False),
        ("send_message", False),
        ("mark_processed", False),
        ("mark_processed", True),
    ]
    # The model sees why its call failed, and the conversation goes on.
    assert "no such request" in model.results[-1].result.data["error_text"]


@pytest.mark.usefixtures("conversation_ready")
async def test_bridge_with_an_llm_agent(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    def echo_status(text: str, results: Results) -> list[llm.ToolInput] | str:
        if not results:
            return [llm.ToolInput("get_status", {})]
        return f"You said {text!r}; I am {results[0].result.data['connection']}."

    agent_id, model = install_model(hass, echo_status)
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: agent_id})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    await emulator.send(installed.conversation_id, text="hello")
    await emulator.send(installed.conversation_id, text="again")
    inbox = await emulator.wait_inbox(installed.conversation_id, 2, within=20)
    assert [item["text"] for item in inbox] == [
        "You said 'hello'; I am connected.",
        "You said 'again'; I am connected.",
    ]
    await wait_until(lambda: runtime.status.pending == 0)
    # One Home Assistant conversation for the Pacerelle conversation, kept across messages.
    expected = ha_conversation_id(installed.conversation_id)
    assert model.conversation_ids == [expected, expected]
