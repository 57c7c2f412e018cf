"""A member removed from a group no longer drives Assist there, with a key they still hold.

The agent keeps a group's recent epochs (a message sealed just before a rotation still
opens), so a removed member's old sender key still opens what they seal with it, and
their device is still trusted. The relay (or a lax one) forwards such a message: it fires
its event as any group message, but Assist runs only what a current member asks (the
senders of the newest epoch's keys, as for pacerelle.ask's response_mode).
"""

import base64
import json
import uuid
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.values.groups import GroupKey, seal_message
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN, light_state
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ANA, ASSIST_IN_GROUPS, family_group, member_writes, replied_to
from tests.helpers.runtime import wait_until

BEN = "usr_ben"


def sealed_with_old_key(emulator: EmulatorHandle, group_id: str, member: str, text: str) -> Any:
    """A group MSG that `member` seals with their sender key of the group's first epoch."""
    record = emulator.emulator.state.groups[group_id]
    old = next(k for k in record.keys if k["sender_id"] == member and k["epoch"] == 1)
    key = GroupKey(group_id, old["key_id"], 1, base64.b64decode(old["raw_key_b64"]))
    return {
        "type": "MSG",
        "id": str(uuid.uuid4()),
        "conversation_id": group_id,
        "from": member,
        "from_device_id": "1",
        "to": f"group:{group_id}",
        "payload_b64": base64.b64encode(seal_message(key, text)).decode(),
        "encrypted": True,
    }


@pytest.mark.usefixtures("kitchen_light")
async def test_a_removed_member_no_longer_drives_assist_with_their_old_key(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, options=ASSIST_IN_GROUPS)
    group_id, members = await family_group(emulator, agent)
    owner = members[0]
    asked = await member_writes(
        emulator, agent, group_id, text="turn on the kitchen light", user_id=owner
    )
    assert asked["trusted"] is True
    await replied_to(emulator, group_id, asked["message_id"])
    assert light_state(hass) == "on"
    await hass.services.async_call("light", "turn_off", {"entity_id": KITCHEN}, blocking=True)

    # The owner leaves; Ana's next message brings the new epoch's keys to the agent.
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [owner]})
    await member_writes(emulator, agent, group_id, text="hello", user_id=ANA)

    forged = sealed_with_old_key(emulator, group_id, owner, "turn on the kitchen light")
    await emulator.faults(inject_frames=[json.dumps(forged)])
    await wait_until(lambda: any(e.data["message_id"] == forged["id"] for e in agent.events))
    # Ben writes next: the bridge answers in order, so once he is answered the forged
    # request was handled.
    ben = await member_writes(emulator, agent, group_id, text="hello", user_id=BEN)
    await replied_to(emulator, group_id, ben["message_id"])

    assert light_state(hass) == "off"
    pending = {r.message_id for r in agent.runtime.agent.pending_requests()}
    assert forged["id"] in pending  # not run, left for automations
