"""Two repairs dialogs of one "added to a group" notice (issues/groups.py), as two tabs or
two people open them: the first names the group, the second then names nothing and aborts
with the naming flow's own translated reason (already_named while the agent has other
groups to name, no_conversations once it has none), and no subentry flow is left open."""

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.issues.groups import NEW_GROUP, notice_id
from tests.helpers.agent import Agent, add_group, start_agent
from tests.helpers.conversations import strings
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.runtime import wait_until

ANA, BEN = "usr_ana", "usr_ben"


async def _dialog(hass: HomeAssistant, agent: Agent, group_id: str) -> Any:
    """The notice's fix flow opened as the repairs dialog opens it (its form)."""
    flows = hass.data["repairs"]["flow_manager"]
    issue = notice_id(agent.entry.entry_id, group_id)
    return await flows.async_init(DOMAIN, context={"issue_id": issue})


async def _answer(hass: HomeAssistant, form: Any, name: str) -> Any:
    return await hass.data["repairs"]["flow_manager"].async_configure(
        form["flow_id"], {"name": name}
    )


def _raised(hass: HomeAssistant, issue: str) -> bool:
    return ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None


def _titles(agent: Agent) -> dict[str, str]:
    return {s.data["conversation_id"]: s.title for s in agent.entry.subentries.values()}


async def test_the_second_dialog_of_a_named_group_names_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent = await start_agent(hass, emulator)
    family, _ = await family_group(emulator, agent)
    neighbours = await add_group(emulator, agent, "Neighbours", [ANA, BEN])
    for group_id, member in ((family, ANA), (neighbours, BEN)):
        await member_writes(emulator, agent, group_id, text="hi", user_id=member)
        issue = notice_id(agent.entry.entry_id, group_id)
        await wait_until(lambda issue=issue: _raised(hass, issue))
    aborts = strings()["issues"][NEW_GROUP]["fix_flow"]["abort"]

    # Neighbours is still unnamed: the naming flow shows its form, then refuses the name.
    first, second = await _dialog(hass, agent, family), await _dialog(hass, agent, family)
    assert (await _answer(hass, first, "Family"))["type"] is FlowResultType.CREATE_ENTRY
    late = await _answer(hass, second, "Our family")
    assert (late["type"], late["reason"]) == (FlowResultType.ABORT, "already_named")
    assert aborts["already_named"]
    assert _titles(agent)[family] == "Family"

    # Nothing left to name after Neighbours: the naming flow aborts before its form.
    first, second = await _dialog(hass, agent, neighbours), await _dialog(hass, agent, neighbours)
    assert (await _answer(hass, first, "Neighbours"))["type"] is FlowResultType.CREATE_ENTRY
    late = await _answer(hass, second, "Next door")
    assert (late["type"], late["reason"]) == (FlowResultType.ABORT, "no_conversations")
    assert aborts["no_conversations"]
    assert sorted(_titles(agent).values()) == ["Family", "Neighbours", "Owner"]
    assert not hass.config_entries.subentries.async_progress()
