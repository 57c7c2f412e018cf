"""The family group of the group tests: the owner, Ana and Ben, two phones each."""

from typing import Any

from homeassistant.core import HomeAssistant

from tests.helpers.agent import OWNER, Agent, add_devices, add_group
from tests.helpers.conversations import name_conversation
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import event_of, human_writes

DEVICES = ("1", "2")


async def family_group(emulator: EmulatorHandle, agent: Agent) -> tuple[str, list[str]]:
    """A group of the owner and two more people, each with two phones; (id, members)."""
    members = [OWNER, "usr_ana", "usr_ben"]
    for member in members:
        await add_devices(emulator, agent, member, DEVICES)
    group_id = await add_group(emulator, agent, "Family", members)
    return group_id, [agent.installed.owner_id, *members[1:]]


async def member_writes(
    emulator: EmulatorHandle, agent: Agent, group_id: str, **body: Any
) -> dict[str, Any]:
    """A member sends `body` to the group; the `pacerelle_message` event it fired."""
    sent = await emulator.admin("POST", f"/conversations/{group_id}/send", body)
    return await event_of(agent, sent["message_id"])


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
