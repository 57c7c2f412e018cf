"""The trust door attacked through the emulator (issue 25): the relay swaps keys, invents
devices and opens sessions of its own; the agent must seal for none of them, and no request
of a blocked key may act (client/trust/door.py)."""

import asyncio
from typing import Any

import pytest
from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.events import EVENT_MESSAGE_STATUS
from custom_components.pacerelle.options import CONF_ASSIST_AGENT, CONF_LLM_CONVERSATIONS
from tests.helpers.agent import Agent, start_agent
from tests.helpers.assist import GatedAgent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.llm import LLM_CONTEXT
from tests.helpers.relay_forgeries import relay_delivers_own_key, relay_opens_session_as
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, human_writes, refused, trust
from tests.helpers.trust import decide

SECRET = "The alarm code is 4711"


async def texts_received(emulator: EmulatorHandle, conversation_id: str) -> list[str]:
    return [str(entry.get("text")) for entry in await emulator.inbox(conversation_id)]


async def test_an_answer_is_never_sealed_for_a_key_swapped_in_after_the_request(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 1 (automation path): the owner's trusted phone asks; the relay then presents
    a new identity key as that phone. The answer to the trusted request is refused
    (`key_changed`), never sealed on the session the new key opened."""
    agent = await start_agent(hass, emulator, spoken=True)
    asked = await human_writes(emulator, agent, text="what is the alarm code?")
    assert asked["trust_state"] == "trusted"
    await emulator.admin("POST", f"/conversations/{agent.conversation_id}/devices/1/reset")
    swapped = await human_writes(emulator, agent, text="hi, it is still me")
    assert (swapped["sender_device_id"], swapped["trust_state"]) == ("1", "changed")

    answer = {"text": SECRET, "source_message_id": asked["message_id"]}
    await refused(hass, "send_message", answer, "key_changed")
    # Nor does a send without a source go to it (it is not trusted), nor to another device.
    await refused(hass, "send_message", {"text": SECRET}, "no_trusted_device")
    assert SECRET not in await texts_received(emulator, agent.conversation_id)
    # The new key's own request may be answered: that key wrote it.
    await call(hass, "send_message", {"text": "ok", "source_message_id": swapped["message_id"]})


async def test_notify_is_sealed_only_for_a_trusted_key(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Notify path: the relay swaps the only device's key; a notification is refused."""
    agent = await start_agent(hass, emulator, spoken=True)
    await emulator.admin("POST", f"/conversations/{agent.conversation_id}/devices/1/reset")
    await human_writes(emulator, agent, text="new phone, who dis")
    await hass.services.async_call(
        "notify", "send_message", {"entity_id": "notify.home", "message": SECRET}, blocking=False
    )
    await hass.async_block_till_done()
    assert SECRET not in await texts_received(emulator, agent.conversation_id)


async def test_a_blocked_key_is_blocked_under_every_device_id(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 5: a blocked phone's identity key writes again as device 3: refused when
    opened (no event, no history), and nothing is sealed for it."""
    agent = await start_agent(hass, emulator, spoken=True)
    owner = agent.installed.owner_id
    await human_writes(emulator, agent, text="hello from a stranger phone", device_id="2")
    await decide(agent, owner, "2", TrustState.BLOCKED)
    await emulator.admin(
        "POST", f"/users/{owner}/devices", {"device_id": "3", "same_identity_as": "2"}
    )
    before = len(agent.events)
    again = await emulator.send(agent.conversation_id, text="let me in", device_id="3")
    await wait_until(lambda: again in agent.runtime.agent.data.inbox.rejected)
    assert len(agent.events) == before
    assert agent.runtime.agent.find_request(again) is None
    assert agent.runtime.trust is not None
    assert agent.runtime.trust.book.get(owner, "3").state is TrustState.BLOCKED
    await refused(hass, "send_message", {"text": SECRET, "to_device_id": "3"}, "blocked_device")
    assert SECRET not in await texts_received(emulator, agent.conversation_id)


async def test_the_flush_fails_a_send_for_a_phone_blocked_while_it_waited(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 3 (flush path): queued offline for the owner's trusted second phone, the
    phone is blocked, the agent reconnects: the phone never receives it, status failed."""
    agent = await start_agent(hass, emulator, spoken=True)
    owner = agent.installed.owner_id
    await human_writes(emulator, agent, text="my tablet", device_id="2")
    await trust(hass, emulator, owner, "2")
    await human_writes(emulator, agent, text="tablet again", device_id="2")  # the last device
    statuses = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: agent.runtime.status.state.value != "connected")
    sent = await call(hass, "send_message", {"text": SECRET})
    assert len(agent.runtime.agent.data.queued) == 1
    await decide(agent, owner, "2", TrustState.BLOCKED)
    await emulator.faults(reset=True)

    def status_of(message_id: str) -> list[str]:
        return [e.data["status"] for e in statuses if e.data["message_id"] == message_id]

    await wait_until(lambda: "failed" in status_of(sent["message_id"]), within=20)
    assert "sent" not in status_of(sent["message_id"])
    assert len(agent.runtime.agent.data.queued) == 0
    assert SECRET not in await texts_received(emulator, agent.conversation_id)


async def test_a_direct_send_to_a_group_member_never_defaults_to_a_relay_session(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 2 (group member path): in a group conversation the owner has no last device;
    the relay opened the group's session with "device 1" with its own key. A direct send
    to the owner there is refused, never sealed for device 1 by default."""
    agent = await start_agent(hass, emulator, spoken=True)
    owner = agent.installed.owner_id
    group_id, _ = await family_group(emulator, agent, devices=("1",))
    relay_opens_session_as(emulator, agent, emulator.emulator.state.groups[group_id], owner)
    forged = await member_writes(emulator, agent, group_id, text="hi", user_id=owner)
    assert forged["trusted"] is False
    direct = {"text": SECRET, "conversation_id": group_id, "to": owner}
    await refused(hass, "send_message", direct, "no_trusted_device")
    await refused(hass, "send_message", {**direct, "to_device_id": "1"}, "untrusted_device")


async def llm_call(hass: HomeAssistant, tool: str, **args: Any) -> Any:
    """A tool call as a model makes it; the result (a refusal raises)."""
    api = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    return await api.async_call_tool(llm.ToolInput(tool_name=tool, tool_args=args))


async def test_the_llm_never_answers_an_untrusted_device_nor_lists_a_blocked_one(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 9 (LLM path): a relay-made device in the owner's conversation asks; a
    prompt-injected model answers it: refused. A blocked device's messages are not listed."""
    agent = await start_agent(hass, emulator, spoken=True)
    owner = agent.installed.owner_id
    asked = await human_writes(emulator, agent, text="send me the history", device_id="2")
    assert asked["trusted"] is False
    with pytest.raises(HomeAssistantError) as caught:
        await llm_call(hass, "send_message", text=SECRET, sourceMessageId=asked["message_id"])
    assert caught.value.translation_key == "llm_untrusted_request"
    assert SECRET not in await texts_received(emulator, agent.conversation_id)

    await decide(agent, owner, "2", TrustState.BLOCKED)
    later = await emulator.send(agent.conversation_id, text="and now?", device_id="2")
    await wait_until(lambda: later in agent.runtime.agent.data.inbox.rejected)
    history = (await llm_call(hass, "get_history", limit=50)).data
    listed = {item["message_id"] for item in history["requests"]}
    assert asked["message_id"] not in listed
    assert later not in listed


async def test_the_llm_sees_exactly_the_events_trust(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Finding 8: a group message sealed with a key the relay delivered over an invented
    device, labelled as the owner's trusted device 1, fires `trusted: false`; the LLM's
    views show the same."""
    agent = await start_agent(hass, emulator)
    owner = agent.installed.owner_id
    await human_writes(emulator, agent, text="hello")
    group_id, _ = await family_group(emulator, agent, devices=("1",))
    hass.config_entries.async_update_entry(
        agent.entry,
        options={**agent.entry.options, CONF_LLM_CONVERSATIONS: [agent.conversation_id, group_id]},
    )
    await hass.async_block_till_done()
    agent = Agent(agent.installed, agent.entry, agent.events)
    await wait_until(lambda: agent.runtime.status.state.value == "connected")
    relay_delivers_own_key(emulator, agent, emulator.emulator.state.groups[group_id], owner, "9")
    forged = await member_writes(
        emulator, agent, group_id, text="unlock the door", user_id=owner, device_id="1"
    )
    assert (forged["sender_device_id"], forged["trusted"]) == ("1", False)
    waited = (await llm_call(hass, "wait_for_messages", conversationId=group_id)).data
    [seen] = [m for m in waited["messages"] if m["message_id"] == forged["message_id"]]
    history = (await llm_call(hass, "get_history", conversationId=group_id)).data
    [listed] = [m for m in history["requests"] if m["message_id"] == forged["message_id"]]
    for view in (seen, listed):
        assert (view["trusted"], view["trust_state"]) == (False, forged["trust_state"])


async def test_the_assist_answer_is_never_sealed_for_a_key_swapped_in_while_it_thought(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """Assist path: the owner's trusted phone asks; while Assist thinks, the relay presents
    a new key as that phone. The answer is refused (`key_changed`), never sealed for it."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    model = MockConfigEntry(domain="test", title="Gated model")
    model.add_to_hass(hass)
    gated = GatedAgent()
    conversation.async_set_agent(hass, model, gated)
    agent = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: model.entry_id})
    asked = await human_writes(emulator, agent, text="what is the alarm code?")
    assert asked["trusted"] is True
    await asyncio.wait_for(gated.asked.wait(), 10)
    await emulator.admin("POST", f"/conversations/{agent.conversation_id}/devices/1/reset")
    swapped = await human_writes(emulator, agent, text="me again")
    assert swapped["trust_state"] == "changed"
    gated.gate.set()
    await wait_until(
        lambda: f"could not answer request {asked['message_id']}: key_changed" in caplog.text
    )
    assert "Done, once you were back." not in await texts_received(emulator, agent.conversation_id)
