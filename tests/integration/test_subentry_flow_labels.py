"""How "Add conversation" lists a large group (subentry_flow.py `label`): its first
MAX_LISTED_MEMBERS members, then "…" for the others, when it was last active, and its id,
so the narrow list stays readable whatever the relay puts in a group."""

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.pacerelle.limits import MAX_LISTED_MEMBERS
from tests.helpers.agent import add_group, start_agent
from tests.helpers.conversations import kept_recipient, name_flow, start_naming, the_subentry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import member_writes

MEMBERS = [f"usr_member{n}" for n in range(MAX_LISTED_MEMBERS + 2)]


async def test_a_large_group_lists_its_first_members_then_an_ellipsis(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id = await add_group(emulator, agent, "Club", MEMBERS)
    await member_writes(emulator, agent, group_id, text="hi all", user_id=MEMBERS[0])

    form = await start_naming(hass, agent)
    assert form["type"] is FlowResultType.FORM, form
    options = form["data_schema"].schema["conversation_id"].config["options"]
    [(value, label)] = [(o["value"], o["label"]) for o in options]
    assert value == group_id
    members, active, shown_id = label.split(" · ")
    listed = members.split(", ")
    assert len(listed) == MAX_LISTED_MEMBERS + 1
    assert listed[-1] == "…"
    assert set(listed[:-1]) < set(MEMBERS)
    assert active.endswith(" UTC")
    assert shown_id == group_id
    hass.config_entries.subentries.async_abort(form["flow_id"])

    # Named, its subentry addresses the whole group, not only the members listed.
    named = await name_flow(hass, agent, group_id, "Club")
    assert named["type"] is FlowResultType.CREATE_ENTRY, named
    assert dict(the_subentry(agent, group_id).data) == {"conversation_id": group_id}
    assert await kept_recipient(agent, group_id) == f"group:{group_id}"
