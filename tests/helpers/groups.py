"""The family group of the group tests: the owner, Ana and Ben, two phones each."""

from collections.abc import Sequence
from typing import Any

from tests.helpers.agent import OWNER, Agent, add_devices, add_group
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import event_of

DEVICES = ("1", "2")
FAMILY = (OWNER, "usr_ana", "usr_ben")


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
