"""The "Send a message" device action, through the emulator: on the agent's device it writes
to the owner, on a named conversation's device to that conversation, its text a template
rendered with the automation's variables; a non-admin's call keeps their entity permission."""

import probatio
import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import Unauthorized
from homeassistant.helpers import device_registry as dr

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.device import conversation_identifiers
from custom_components.pacerelle.device_action import (
    ACTION_SCHEMA,
    async_call_action_from_config,
    async_get_action_capabilities,
    async_get_actions,
)
from tests.helpers.agent import agent_device, start_agent
from tests.helpers.conversations import name_conversation
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.services import human_writes


def _action(device_id: str, text: str) -> dict[str, str]:
    return dict(
        ACTION_SCHEMA(
            {"domain": DOMAIN, "device_id": device_id, "type": "send_message", "text": text}
        )
    )


async def test_send_a_message_from_the_agents_device(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    await human_writes(emulator, agent, text="hello")  # the person writes first
    device = agent_device(hass, agent.entry.entry_id)
    types = {action["type"] for action in await async_get_actions(hass, device.id)}
    assert types == {"send_message", "trust_device", "block_device"}
    capabilities = await async_get_action_capabilities(
        hass, {"domain": DOMAIN, "device_id": device.id, "type": "send_message"}
    )
    with pytest.raises(probatio.MultipleInvalid, match="text"):
        capabilities["extra_fields"]({})

    config = _action(device.id, "The door is {{ state }}.")
    await async_call_action_from_config(hass, config, {"state": "locked"}, Context())

    conversation = agent.installed.conversation_id
    [received] = await emulator.wait_inbox(conversation, 1)
    assert received["text"] == "The door is locked."


async def test_send_a_message_from_a_named_conversations_device(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_read_only_user: object
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id="usr_ana")
    await name_conversation(hass, agent, group_id, "Family")
    [device] = dr.async_get(hass).async_get_devices(
        identifiers=conversation_identifiers(agent.entry.entry_id, group_id)
    )
    # A conversation's device offers the send only (trust is the agent's device's).
    assert [a["type"] for a in await async_get_actions(hass, device.id)] == ["send_message"]

    await async_call_action_from_config(hass, _action(device.id, "Dinner"), {}, Context())
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {e["text"] for e in entries} == {"Dinner"}

    # A user who may not control notify.family cannot send there through its device.
    read_only = Context(user_id=hass_read_only_user.id)  # type: ignore[attr-defined]
    with pytest.raises(Unauthorized):
        await async_call_action_from_config(hass, _action(device.id, "Pizza"), {}, read_only)
