"""The family group of the group tests (the owner, Ana and Ben, two phones each), the
agent's options for Assist in groups, and what members and the agent write there."""

import time
from collections.abc import Sequence
from typing import Any

from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.options import CONF_ASSIST_AGENT, CONF_ASSIST_IN_GROUPS
from tests.helpers.agent import OWNER, Agent, add_devices, add_group
from tests.helpers.conversations import name_conversation
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import event_of, human_writes

DEVICES = ("1", "2")
ANA, BEN = "usr_ana", "usr_ben"
FAMILY = (OWNER, ANA, BEN)
# The agent's options for Home Assistant's own Assist, answering in groups too.
ASSIST_IN_GROUPS = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_ASSIST_IN_GROUPS: True}


async def family_group(
    emulator: EmulatorHandle, agent: Agent, *, devices: Sequence[str] = DEVICES
) -> tuple[str, list[str]]:
    """The group "Family" of the owner, Ana and Ben with the agent in it; (id, members).

    Each member gets the phones `devices`; one a member has already (the owner's first
    phone, once it wrote to the agent) is kept as it is.
    """
    known = emulator.emulator.state.devices
    for member in FAMILY:
        user_id = agent.installed.owner_id if member == OWNER else member
        missing = [d for d in devices if f"{user_id}/{d}" not in known]
        await add_devices(emulator, agent, member, missing)
    group_id = await add_group(emulator, agent, "Family", FAMILY)
    return group_id, [agent.installed.owner_id, *FAMILY[1:]]


async def member_writes(
    emulator: EmulatorHandle, agent: Agent, group_id: str, **body: Any
) -> dict[str, Any]:
    """A member sends `body` to the group; the `pacerelle_message` event it fired."""
    sent = await emulator.admin("POST", f"/conversations/{group_id}/send", body)
    return await event_of(agent, sent["message_id"])


async def replied_to(emulator: EmulatorHandle, group_id: str, message_id: str) -> None:
    """Until the agent's reply to `message_id` reached the group (within 30 s: the Assist
    bridge first leaves automations their grace, and a quiet machine makes round trips fast,
    so a count of round trips is no bound)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(e.get("reply_to_message_id") == message_id for e in await emulator.inbox(group_id)):
            return
        await emulator.advance_clock(0)  # an admin round trip: yields to the agent meanwhile
    raise AssertionError(f"no reply to {message_id}")


async def named_family(
    hass: HomeAssistant, emulator: EmulatorHandle, agent: Agent, title: str = "Family"
) -> tuple[str, list[str]]:
    """The family group, seen by the agent (the owner wrote first, trusted on first use,
    then Ana in the group) and named `title` as "Add conversation" does (`notify.family`,
    its state written); (id, members)."""
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id="usr_ana")
    await name_conversation(hass, agent, group_id, title)
    return group_id, members
