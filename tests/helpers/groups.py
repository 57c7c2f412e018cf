"""The family group of the group tests: the owner, Ana and Ben, two phones each."""

from typing import Any

from tests.helpers.agent import OWNER, Agent, add_devices, add_group
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import event_of

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
