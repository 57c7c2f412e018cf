"""The family group of the group tests: the owner, Ana and Ben, two phones each."""

from typing import Any

from homeassistant.const import CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.util import slugify

from custom_components.pacerelle.const import CONF_CONVERSATION_ID, SUBENTRY_CONVERSATION
from tests.helpers.agent import OWNER, Agent, add_devices, add_group
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
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
    then Ana in the group) and named `title` through the subentry flow as the frontend
    drives it ("Add conversation"), its notify entity written (`notify.family`); (id, members)."""
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id="usr_ana")
    flows = hass.config_entries.subentries
    form = await flows.async_init(
        (agent.entry.entry_id, SUBENTRY_CONVERSATION), context={"source": "user"}
    )
    done = await flows.async_configure(
        form["flow_id"], {CONF_CONVERSATION_ID: group_id, CONF_NAME: title}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    entity_id = f"notify.{slugify(title)}"
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    return group_id, members
