"""The named conversations of the conversation device and entity tests: two named groups,
the owner's direct conversation named "Owner", and the entities each gets."""

from types import MappingProxyType

from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant

from tests.helpers.agent import OWNER, Agent, add_group, start_agent
from tests.helpers.conversations import name_flow
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ANA, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes

FAMILY = ("notify.family", "event.family_messages", "sensor.family_members")
KITCHEN = ("notify.kitchen", "event.kitchen_messages", "sensor.kitchen_members")
OWNER_ENTITIES = ("event.owner_messages", "sensor.owner_members")


async def two_named_groups(hass: HomeAssistant, emulator: EmulatorHandle) -> Agent:
    """The family group (owner, Ana, Ben) and the kitchen group (owner, Ana), both named,
    after the owner wrote directly (trusted on first use) and in each group."""
    agent = await start_agent(hass, emulator)
    family, _ = await family_group(emulator, agent)
    kitchen = await add_group(emulator, agent, "Kitchen", [OWNER, ANA])
    await human_writes(emulator, agent, text="hello")
    owner = agent.installed.owner_id
    await member_writes(emulator, agent, family, text="hi family", user_id=owner)
    await member_writes(emulator, agent, kitchen, text="hi kitchen", user_id=owner)
    await name_flow(hass, agent, family, "Family")
    await name_flow(hass, agent, kitchen, "Kitchen")
    await wait_until(lambda: all(hass.states.get(e) for e in (*FAMILY, *KITCHEN)))
    return agent


async def name_owners_conversation(hass: HomeAssistant, agent: Agent) -> ConfigSubentry:
    """The owner's direct conversation named "Owner", as the entry's flow and migration
    name it."""
    made = [s for s in agent.entry.subentries.values() if s.unique_id == agent.conversation_id]
    if made:  # entries made by the flow name it from the start
        await wait_until(lambda: all(hass.states.get(e) for e in OWNER_ENTITIES))
        return made[0]
    data = {"conversation_id": agent.conversation_id}
    subentry = ConfigSubentry(
        data=MappingProxyType(data),
        subentry_type="conversation",
        title="Owner",
        unique_id=agent.conversation_id,
    )
    assert hass.config_entries.async_add_subentry(agent.entry, subentry)
    await wait_until(lambda: all(hass.states.get(e) for e in OWNER_ENTITIES))
    return subentry
