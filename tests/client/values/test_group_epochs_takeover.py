"""A removed member who makes up an epoch of his own is no member again (group_epochs.py).

Ben leaves the family group (the agent holds epoch 2 without him). His phone's Signal
session with the agent is still trusted, so he seals a key for an "epoch 99" over it and
the relay lists it. Nobody who is still a member moved the group there: his command sealed
with that key neither fires an event nor drives Assist, his answer does not settle a
collective `ask`, and the agent's next group messages are sealed with epoch 2, which only
the members who remain hold.
"""

import asyncio
import base64
import json
import os
import uuid
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.values.groups import GroupKey, seal_message
from tests.helpers.agent import Agent, start_agent
from tests.helpers.assist import light_state
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.group_ask import answer, ask
from tests.helpers.groups import ASSIST_IN_GROUPS, DEVICES, family_group, member_writes, replied_to
from tests.helpers.runtime import wait_until
from tests.helpers.services import trust

ANA, BEN = "usr_ana", "usr_ben"


async def trusted_family_with_assist(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> tuple[Agent, str, list[str]]:
    """The family group, every member's phone 1 trusted, Assist answering in groups."""
    agent = await start_agent(hass, emulator, options=ASSIST_IN_GROUPS)
    group_id, members = await family_group(emulator, agent)
    for member in members:
        await member_writes(emulator, agent, group_id, text="hi", user_id=member, device_id="1")
        decided = await trust(hass, emulator, member, "1")
        assert decided["trust_state"] == "trusted"
    return agent, group_id, members


def own_epoch_key(emulator: EmulatorHandle, agent: Agent, group_id: str, epoch: int) -> GroupKey:
    """Ben's app seals a key of his own for `epoch` over his trusted session (phone 1), and
    the relay lists it for the agent."""
    emu = emulator.emulator
    key = GroupKey(group_id, f"gk-ben-{epoch}", epoch, os.urandom(32))
    body = {k: v for k, v in key.to_json().items() if not k.startswith("sender")}
    framed = emu.humans.device(BEN, "1").encrypt_for(
        emu, agent.installed.agent_id, json.dumps(body).encode(), group_id
    )
    emu.state.group_keys.append(
        {
            "conversation_id": group_id,
            "key_id": key.key_id,
            "epoch": epoch,
            "sender_id": BEN,
            "sender_device_id": "1",
            "envelope_b64": base64.b64encode(framed).decode(),
            "agent_id": agent.installed.agent_id,
        }
    )
    return key


async def ben_sends(emulator: EmulatorHandle, agent: Agent, key: GroupKey, text: str) -> str:
    """A group message of Ben's sealed with `key`, which the relay delivers."""
    message_id = str(uuid.uuid4())
    await emulator.emulator.hub.enqueue(
        agent.installed.agent_id,
        {
            "type": "MSG",
            "id": message_id,
            "conversation_id": key.conversation_id,
            "from": BEN,
            "from_device_id": "1",
            "to": f"group:{key.conversation_id}",
            "payload_b64": base64.b64encode(seal_message(key, text)).decode(),
            "encrypted": True,
        },
    )
    return message_id


async def ana_writes(emulator: EmulatorHandle, agent: Agent, group_id: str, text: str) -> str:
    """Ana writes; her message id once its event fired (found by id, whatever came first)."""
    sent = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": text, "user_id": ANA}
    )
    message_id = str(sent["message_id"])
    await wait_until(lambda: any(e.data["message_id"] == message_id for e in agent.events))
    return message_id


async def ben_answers(emulator: EmulatorHandle, agent: Agent, key: GroupKey, widget_id: str) -> str:
    response = {"type": "widget.response", "id": str(uuid.uuid4()), "ref": widget_id, "value": True}
    return await ben_sends(emulator, agent, key, json.dumps(response))


async def widget_entries(
    emulator: EmulatorHandle, group_id: str, people: int
) -> list[dict[str, Any]]:
    """The agent's question as every device of the `people` members received it."""
    async with asyncio.timeout(10):
        while True:
            entries = [
                e for e in await emulator.inbox(group_id) if e.get("kind") == "widget.standard"
            ]
            if len(entries) >= people * len(DEVICES):
                return entries
            await asyncio.sleep(0.02)


def readable_only_by_members(emulator: EmulatorHandle, group_id: str, entries: Any) -> None:
    """Every entry opened for a member of now, with a key of epoch 2 Ben never held."""
    group = emulator.emulator.state.groups[group_id]
    assert BEN not in group.members
    for entry in entries:
        assert entry["user_id"] != BEN
        assert entry.get("kind") != "undecryptable", entry
        assert entry["epoch"] == 2, entry
        held_by = next(k["holders"] for k in group.keys if k["key_id"] == entry["key_id"])
        assert BEN not in held_by


@pytest.mark.usefixtures("kitchen_light")
async def test_a_removed_members_own_epoch_makes_him_no_member_again(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family_with_assist(hass, emulator)
    remaining = [member for member in members if member != BEN]
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    await member_writes(emulator, agent, group_id, text="hello", user_id=ANA)  # epoch 2 learned
    told = len(await emulator.inbox(group_id))

    forged = own_epoch_key(emulator, agent, group_id, 99)
    command = await ben_sends(emulator, agent, forged, "turn on the kitchen light")
    # Ana writes next: the bridge answers in order, so once she is answered, Ben's command
    # would have been run.
    ana = await ana_writes(emulator, agent, group_id, "what time is it")
    await replied_to(emulator, group_id, ana)
    assert light_state(hass) == "off"
    assert command not in [event.data["message_id"] for event in agent.events]
    assert light_state(hass) == "off"
    # The answer to Ana went to the members who remain, sealed with epoch 2.
    entries = (await emulator.inbox(group_id))[told:]
    assert {(e["user_id"], e["device_id"]) for e in entries} == {
        (member, device) for member in remaining for device in DEVICES
    }
    readable_only_by_members(emulator, group_id, entries)

    # A collective question: Ben's answer, sealed with his epoch 99, does not settle it.
    question = ask(hass, group_id, "collective")
    entries = await widget_entries(emulator, group_id, len(remaining))
    readable_only_by_members(emulator, group_id, entries)
    forged_answer = await ben_answers(emulator, agent, forged, str(entries[0]["payload"]["id"]))
    await answer(emulator, group_id, str(entries[0]["payload"]["id"]), ANA, False)
    result = await question
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, ANA)
    assert forged_answer not in [event.data["message_id"] for event in agent.events]


@pytest.mark.usefixtures("kitchen_light")
async def test_a_key_he_adds_to_the_current_epoch_does_not_make_him_a_member_either(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """The same with a key for epoch 2 itself: it opens (epoch 2 is the group's), but he
    was removed from epoch 2 when the group moved there, so nothing he seals acts, and the
    agent never seals with his key."""
    agent, group_id, members = await trusted_family_with_assist(hass, emulator)
    remaining = [member for member in members if member != BEN]
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    await member_writes(emulator, agent, group_id, text="hello", user_id=ANA)
    own_epoch_key(emulator, agent, group_id, 2)
    question = ask(hass, group_id, "collective")  # fetches the keys before it is sealed
    entries = await widget_entries(emulator, group_id, len(remaining))
    readable_only_by_members(emulator, group_id, entries)
    conversations = agent.runtime.agent.data.conversations
    ben_key = next(k for k in conversations.group_keys.values() if k.key_id == "gk-ben-2")
    widget_id = str(entries[0]["payload"]["id"])
    forged = await ben_answers(emulator, agent, ben_key, widget_id)
    await wait_until(lambda: any(e.data["message_id"] == forged for e in agent.events))
    await answer(emulator, group_id, widget_id, ANA, False)
    result = await question
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, ANA)
    # His command sealed with it opens, but Assist does not run it.
    command = await ben_sends(emulator, agent, ben_key, "turn on the kitchen light")
    await wait_until(lambda: any(e.data["message_id"] == command for e in agent.events))
    ana = await ana_writes(emulator, agent, group_id, "what time is it")
    await replied_to(emulator, group_id, ana)
    assert light_state(hass) == "off"
    # And an automation that reads `trusted` does not act on him either (his phone stays
    # trusted: it is his membership that is gone), nor does the LLM's view of it.
    by_id = {e.data["message_id"]: e.data for e in agent.events}
    assert (by_id[command]["trusted"], by_id[forged]["trusted"]) == (False, False)
    assert by_id[ana]["trusted"] is True
    stored = agent.runtime.agent.find_request(command)
    assert stored is not None
    assert not stored.judged.trusted
    device = agent.runtime.trust.book.get(BEN, "1")
    assert device is not None
    assert device.trusted
