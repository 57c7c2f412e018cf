"""Group key bounds with Home Assistant's own trust judge (trust.py), through the emulator.

The relay (the emulator, made hostile by the test) lists, next to the family group's real
keys, envelopes over 70 devices it made up; the agent fetches them all for a group message
sealed with one of them. The trusted owner's key is kept though least recently used, the
agent seals with it, and the store holds at most MAX_KEYS_PER_GROUP keys of the group
(client/conversations/group_key_bounds.py).
"""

import base64
import json
import os

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import MAX_KEYS_PER_GROUP
from custom_components.pacerelle.client.values.groups import GroupKey, seal_message
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import call

GHOSTS = 70


def relay_lists_invented_keys(
    emulator: EmulatorHandle, agent: Agent, group_id: str
) -> list[GroupKey]:
    """Envelopes over a new session each, of people the relay made up; their keys."""
    emu = emulator.emulator
    epoch = emu.state.groups[group_id].epoch
    made = []
    for index in range(GHOSTS):
        person = f"usr_ghost_{index}"
        key = {
            "type": "pacerelle.group.sender_key",
            "v": 1,
            "alg": "AES-256-GCM",
            "conversation_id": group_id,
            "key_id": f"gk-ghost-{index}",
            "epoch": epoch + 1,  # newer than the members': the one a naive agent seals with
            "raw_key_b64": base64.b64encode(os.urandom(32)).decode(),
        }
        device = emu.humans.device(person, "1")
        sealed = device.encrypt_for(
            emu, agent.installed.agent_id, json.dumps(key).encode(), group_id
        )
        emu.state.group_keys.append(
            {
                "conversation_id": group_id,
                "key_id": key["key_id"],
                "epoch": key["epoch"],
                "sender_id": person,
                "sender_device_id": "1",
                "envelope_b64": base64.b64encode(sealed).decode(),
                "agent_id": agent.installed.agent_id,
            }
        )
        made.append(GroupKey.from_json(key))
    return made


async def relay_sends(emulator: EmulatorHandle, person: str, key: GroupKey) -> None:
    """A group message of `person`'s sealed with `key`, straight into the agent's gateway."""
    frame = {
        "type": "MSG",
        "id": f"m-{key.key_id}",
        "conversation_id": key.conversation_id,
        "from": person,
        "from_device_id": "1",
        "to": f"group:{key.conversation_id}",
        "payload_b64": base64.b64encode(seal_message(key, "open the garage")).decode(),
        "encrypted": True,
    }
    await emulator.faults(inject_frames=[json.dumps(frame)])


async def test_invented_keys_never_push_out_the_trusted_members_key(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    owner = agent.installed.owner_id
    first = await member_writes(emulator, agent, group_id, text="hi", user_id=owner)
    assert first["trusted"] is True  # trusted on first use
    owner_key = next(
        key
        for key in agent.runtime.agent.data.conversations.group_keys.values()
        if key.sender_id == owner
    )

    # The relay's first invented member writes: the agent fetches all 70 envelopes. The
    # message does not open: its epoch is one no member moved the group to
    # (client/values/group_epochs.py). The owner's key is now the least recently
    # used of the group.
    invented = relay_lists_invented_keys(emulator, agent, group_id)
    before = len(agent.events)
    await relay_sends(emulator, "usr_ghost_0", invented[0])
    await wait_until(lambda: agent.runtime.agent.data.evictions.group_keys > 0)
    assert len(agent.events) == before

    await call(
        hass,
        "send_message",
        {"text": "Dinner is ready", "conversation_id": group_id, "to": f"group:{group_id}"},
    )
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {(entry["text"], entry["key_id"]) for entry in entries} == {
        ("Dinner is ready", owner_key.key_id)
    }
    data = agent.runtime.agent.data
    keys = [k for k in data.conversations.group_keys.values() if k.conversation_id == group_id]
    assert len(keys) == MAX_KEYS_PER_GROUP
    assert owner_key.name in data.conversations.group_keys
    # 73 keys learned (the three members' and 70 invented): the 9 least valuable evicted.
    assert data.evictions.group_keys == len(members) + GHOSTS - MAX_KEYS_PER_GROUP
    # The owner still writes in the group, with the key that was kept.
    again = await member_writes(emulator, agent, group_id, text="thanks", user_id=owner)
    assert (again["text"], again["trusted"]) == ("thanks", True)
