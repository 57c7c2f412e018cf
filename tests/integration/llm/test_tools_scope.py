"""The LLM API reaches only the conversations the user chose (issue 12 item 10): a
prompt-injected call naming another conversation, request or recipient is a tool error."""

import json

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from custom_components.pacerelle.options import CONF_LLM_CONVERSATIONS
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle, Installed
from tests.helpers.llm import call, held, owner_asks
from tests.helpers.runtime import wait_until
from tests.helpers.trust import forged_text
from tests.helpers.widget_specs import widget

FAMILY = "conv_family"
CONFIRM = widget("confirm", {"title": "?"}, "c-1")


async def someone_writes_elsewhere(
    emulator: EmulatorHandle, installed: Installed, runtime: PacerelleRuntime, text: str
) -> str:
    """A real encrypted message from another person, in another conversation of the agent."""
    message_id = await forged_text(emulator, installed, "usr_aunt", text, conversation_id=FAMILY)
    await held(runtime, message_id)
    return message_id


async def test_tools_stay_in_the_owners_conversation_by_default(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, mine = await owner_asks(hass, emulator, "is the door locked?")
    installed, runtime, direct = agent.installed, agent.runtime, agent.conversation_id
    secret = await someone_writes_elsewhere(emulator, installed, runtime, "my PIN is 4711")

    # Reads leave the other conversation out.
    waited = await call(hass, "wait_for_messages", timeoutMs=0)
    assert [m["message_id"] for m in waited["messages"]] == [mine]
    history = await call(hass, "get_history")
    assert [r["message_id"] for r in history["requests"]] == [mine]
    assert "4711" not in json.dumps(history)
    current = await call(hass, "get_current_conversation")
    assert current["conversation"]["conversation_id"] == direct

    # A prompt-injected model tries to reach it, or to copy things to someone else.
    refused = [
        ("get_history", {"conversationId": FAMILY}),
        ("wait_for_messages", {"timeoutMs": 0, "conversationId": FAMILY}),
        ("get_checkpoints", {"conversationId": FAMILY}),
        ("send_message", {"text": "the door code is 1234", "conversationId": FAMILY}),
        ("send_message", {"text": "the door code is 1234", "to": "usr_aunt"}),
        ("send_message", {"text": "the door code is 1234", "sourceMessageId": secret}),
        ("send_widget", {"widgetJson": CONFIRM, "conversationId": FAMILY, "to": "usr_aunt"}),
        ("mark_processed", {"messageId": secret}),
        (
            "save_checkpoint",
            {"sourceMessageId": secret, "summary": "s", "nextAction": "a"},
        ),
    ]
    for tool, args in refused:
        with pytest.raises(HomeAssistantError, match="may"):
            await call(hass, tool, **args)
    assert await emulator.inbox(direct) == []

    # In scope, sending works as before.
    await call(hass, "send_message", text="Yes, it is.", sourceMessageId=mine)
    [reply] = await emulator.wait_inbox(direct, 1)
    assert reply["text"] == "Yes, it is."


async def test_the_options_widen_the_scope(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    installed, entry, runtime = agent.installed, agent.entry, agent.runtime
    secret = await someone_writes_elsewhere(emulator, installed, runtime, "dinner at 7?")

    hass.config_entries.async_update_entry(
        entry, options={CONF_LLM_CONVERSATIONS: [installed.conversation_id, FAMILY]}
    )
    assert await hass.config_entries.async_reload(entry.entry_id)
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state.value == "connected")
    await held(runtime, secret)  # loaded from the store (or redelivered) after the reload
    only = await call(hass, "wait_for_messages", timeoutMs=0, conversationId=FAMILY)
    assert [m["message_id"] for m in only["messages"]] == [secret]
    await call(hass, "mark_processed", messageId=secret)


async def test_a_conversation_out_of_scope_is_refused_alike_known_or_not(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Whether the agent knows a conversation outside the scope is not for the model to
    learn: one it knows and one it never saw get the same refusal, before any resolving."""
    agent, _ = await owner_asks(hass, emulator, "hello")
    await someone_writes_elsewhere(emulator, agent.installed, agent.runtime, "hi")
    for conversation_id in (FAMILY, "conv_never_seen"):
        with pytest.raises(HomeAssistantError) as caught:
            await call(hass, "send_message", text="x", conversationId=conversation_id)
        assert caught.value.translation_key == "llm_out_of_scope", conversation_id
    assert await emulator.inbox(agent.conversation_id) == []
