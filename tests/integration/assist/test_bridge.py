"""The Assist bridge: the owner's messages answered by a conversation agent, others ignored."""

import asyncio

import pytest
from homeassistant.components import conversation
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from homeassistant.helpers.chat_session import DATA_CHAT_SESSION
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.assist import bridge as assist
from custom_components.pacerelle.assist.bridge import ha_conversation_id
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN, AnyLanguageAgent, GatedAgent, answered, assisted_by
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held
from tests.helpers.owner_group import owner_group_key, owner_group_message
from tests.helpers.runtime import wait_until
from tests.helpers.trust import forged_text

APOLOGY = "Sorry, I could not answer that. The problem was logged in Home Assistant"


@pytest.mark.usefixtures("kitchen_light")
async def test_owner_turns_on_the_kitchen_light_through_assist(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    conversation = installed.conversation_id

    asked = await emulator.send(conversation, text="turn on the kitchen light")
    reply = await answered(emulator, installed, 1)
    assert hass.states.get(KITCHEN).state == "on"
    assert reply["reply_to_message_id"] == asked
    assert reply["history"] == "valid"  # encrypted, with its history record
    assert reply["kind"] == "text"
    assert reply["text"] == "Turned on the light"  # Assist's own answer
    await wait_until(lambda: runtime.status.pending == 0)
    handled = runtime.agent.data.history.requests[-1]
    assert handled.request.message_id == asked
    assert handled.processed_at is not None
    assert handled.note == f"Answered by {HOME_ASSISTANT_AGENT} (Assist bridge)"

    # The same Home Assistant conversation carries on across messages.
    await emulator.send(conversation, text="turn off the kitchen light")
    await answered(emulator, installed, 2)
    assert hass.states.get(KITCHEN).state == "off"
    sessions = hass.data[DATA_CHAT_SESSION]
    assert [cid for cid in sessions if cid.startswith("pacerelle-")] == [
        ha_conversation_id(conversation)
    ]


@pytest.mark.usefixtures("kitchen_light")
async def test_someone_else_is_ignored(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    conversation = installed.conversation_id
    # A second user's device, with its own Signal session, writes in the conversation.
    guest = await forged_text(emulator, installed, "usr_guest", "turn on the kitchen light")
    await held(runtime, guest)
    assert runtime.agent.find_request(guest).sender_id == "usr_guest"

    # The owner's next message is answered; the bridge works in order, so by then the
    # guest's would have been too.
    await emulator.send(conversation, text="what time is it")
    await answered(emulator, installed, 1)
    await wait_until(lambda: runtime.status.pending == 1)
    assert hass.states.get(KITCHEN).state == "off"
    assert [r.message_id for r in runtime.agent.pending_requests()] == [guest]
    assert len(await emulator.inbox(conversation)) == 1


async def test_off_by_default(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    message_id = await emulator.send(installed.conversation_id, text="turn on the kitchen light")
    await held(runtime, message_id)
    # Another request answered by hand arrives after anything the bridge would have sent.
    await runtime.agent.send_text("by hand", source_message_id=message_id)
    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert [entry["text"] for entry in inbox] == ["by hand"]
    assert runtime.status.pending == 1


async def test_a_failing_agent_answers_with_an_apology(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: "conversation.nobody"})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    asked = await emulator.send(installed.conversation_id, text="hello")
    reply = await answered(emulator, installed, 1)
    assert (reply["text"], reply["reply_to_message_id"]) == (APOLOGY, asked)
    await wait_until(lambda: runtime.status.pending == 0)
    assert "conversation.nobody could not answer Pacerelle request" in caplog.text


@pytest.mark.usefixtures("kitchen_light")
async def test_group_messages_are_ignored(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    conversation = installed.conversation_id
    # The owner's group key reaches the agent over Signal, then a group message uses it.
    key, _ = await owner_group_key(emulator, installed)
    await owner_group_message(
        emulator, installed, key, "group-message-1", "turn on the kitchen light"
    )
    await held(runtime, "group-message-1")
    assert runtime.agent.find_request("group-message-1").is_group

    await emulator.send(conversation, text="what time is it")
    await answered(emulator, installed, 1)
    await wait_until(lambda: runtime.status.pending == 1)
    assert hass.states.get(KITCHEN).state == "off"
    assert [r.message_id for r in runtime.agent.pending_requests()] == ["group-message-1"]


@pytest.mark.usefixtures("kitchen_light")
async def test_requests_from_before_the_bridge_are_not_answered(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    old = await emulator.send(installed.conversation_id, text="turn on the kitchen light")
    await held(runtime, old)

    # Choosing Assist in the options reloads the entry with the bridge on.
    hass.config_entries.async_update_entry(entry, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state.value == "connected")
    new = await emulator.send(installed.conversation_id, text="what time is it")
    [reply] = await emulator.wait_inbox(installed.conversation_id, 1, within=20)
    assert reply["reply_to_message_id"] == new
    await wait_until(lambda: runtime.status.pending == 1)
    assert [r.message_id for r in runtime.agent.pending_requests()] == [old]
    assert hass.states.get(KITCHEN).state == "off"


class StuckAgent(AnyLanguageAgent):
    """A conversation agent that never answers (a hung LLM service)."""

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_stuck_agent_times_out_with_an_apology(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assist, "ASSIST_ANSWER_TIMEOUT", 0.2)
    installed = (await assisted_by(hass, emulator, StuckAgent(), "Stuck model")).installed
    await emulator.send(installed.conversation_id, text="first")
    await emulator.send(installed.conversation_id, text="second")
    inbox = await emulator.wait_inbox(installed.conversation_id, 2, within=20)
    assert [item["text"] for item in inbox] == [APOLOGY, APOLOGY]


async def test_an_answer_waits_for_the_reconnection(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    gated = GatedAgent()
    started = await assisted_by(hass, emulator, gated, "Gated model")
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    asked = await emulator.send(installed.conversation_id, text="close the shutters")
    await asyncio.wait_for(gated.asked.wait(), 10)

    # The connection drops and cannot come back yet while the agent thinks.
    await emulator.faults(gateway_status=503, drop_connections=True)
    await wait_until(lambda: runtime.status.state is ConnectionState.RECONNECTING)
    gated.gate.set()
    # The answer is queued durably (the outbox): the request is handled, the answer waits.
    # Queued first, then marked processed: one condition waits for both.
    await wait_until(lambda: runtime.status.queued_sends == 1 and runtime.status.pending == 0)
    assert await emulator.inbox(installed.conversation_id) == []

    await emulator.faults(reset=True)
    [reply] = await emulator.wait_inbox(installed.conversation_id, 1, within=30)
    assert (reply["text"], reply["reply_to_message_id"]) == ("Done, once you were back.", asked)
    await wait_until(lambda: runtime.status.pending == 0)
