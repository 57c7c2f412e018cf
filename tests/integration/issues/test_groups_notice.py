"""The notice "<agent> was added to a group" (issues/groups.py), through the emulator and Home
Assistant's repairs, driven as the frontend drives them: a group's first message raises one
notice, its fix flow names the group (the subentry and its notify entity exist after, the
notice is gone), a second group raises a second one, a dismissed notice stays dismissed, and
groups a relay invents raise at most MAX_GROUP_NOTICES at once."""

import re
from typing import Any
from urllib.parse import quote

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.issues.groups import (
    NEW_GROUP,
    async_notice_group,
    notice_id,
)
from custom_components.pacerelle.issues.markdown import markdown_text
from custom_components.pacerelle.limits import MAX_GROUP_NOTICES
from tests.helpers.agent import Agent, add_group, start_agent
from tests.helpers.conversations import (
    kept_recipient,
    name_conversation,
    name_flow,
    notify_of,
    strings,
    subentry_of,
)
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.readme import README
from tests.helpers.runtime import wait_until

ANA, BEN = "usr_ana", "usr_ben"


def notices(hass: HomeAssistant, agent: Agent) -> dict[str, ir.IssueEntry]:
    """The agent's group notices by conversation id, dismissed ones included."""
    return {
        str((issue.data or {})["conversation_id"]): issue
        for (domain, _), issue in ir.async_get(hass).issues.items()
        if domain == DOMAIN
        and issue.translation_key == NEW_GROUP
        and (issue.data or {}).get("entry_id") == agent.entry.entry_id
    }


async def noticed(hass: HomeAssistant, agent: Agent, group_id: str) -> ir.IssueEntry:
    await wait_until(lambda: group_id in notices(hass, agent))
    return notices(hass, agent)[group_id]


async def fix(hass: HomeAssistant, agent: Agent, group_id: str, *answers: str) -> list[Any]:
    """The notice's fix flow, as the repairs dialog runs it: its form, then each name given."""
    flows = hass.data["repairs"]["flow_manager"]
    issue = notice_id(agent.entry.entry_id, group_id)
    steps = [await flows.async_init(DOMAIN, context={"issue_id": issue})]
    for answer in answers:
        steps.append(await flows.async_configure(steps[-1]["flow_id"], {"name": answer}))
    return steps


async def start(hass: HomeAssistant, emulator: EmulatorHandle) -> Agent:
    assert await async_setup_component(hass, "repairs", {})
    return await start_agent(hass, emulator)


async def test_a_new_group_raises_one_notice_whose_fix_flow_names_it(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    family, members = await family_group(emulator, agent)
    await member_writes(emulator, agent, family, text="hi", user_id=ANA)
    notice = await noticed(hass, agent, family)
    assert (notice.is_fixable, notice.is_persistent, notice.dismissed_version) == (
        True,
        True,
        None,
    )
    assert notice.translation_placeholders == {"agent_name": "Home"}
    title = strings()["issues"][NEW_GROUP]["title"]
    assert title.format(**notice.translation_placeholders) == "Home was added to a group"
    # More messages from it: still one notice.
    await member_writes(emulator, agent, family, text="again", user_id=BEN)
    assert list(notices(hass, agent)) == [family]

    # The fix flow shows the group (id, members) and asks for a name; a bad one is refused
    # with the naming form's own error, and nothing is named.
    form, bad, done = await fix(hass, agent, family, " ", "Family")
    assert (form["type"], form["step_id"]) == (FlowResultType.FORM, "init")
    shown = form["description_placeholders"]["conversation"].replace("\\", "")
    assert family in shown
    assert all(member in shown for member in members)
    assert (bad["type"], bad["errors"]) == (FlowResultType.FORM, {"name": "invalid_name"})
    assert strings()["issues"][NEW_GROUP]["fix_flow"]["error"]["invalid_name"]
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    # Named through "Add conversation"'s own flow: the subentry and its notify entity.
    subentry = subentry_of(agent, family)
    assert subentry is not None
    assert (subentry.title, dict(subentry.data)) == ("Family", {"conversation_id": family})
    assert await kept_recipient(agent, family) == f"group:{family}"
    await wait_until(lambda: notify_of(hass, agent, family) == "notify.family")
    assert notices(hass, agent) == {}
    # No half-done subentry flow is left behind.
    assert not hass.config_entries.subentries.async_progress()

    # A second group: a second notice; the named one raises none again.
    neighbours = await add_group(emulator, agent, "Neighbours", [ANA, BEN])
    await member_writes(emulator, agent, neighbours, text="parcel?", user_id=BEN)
    await noticed(hass, agent, neighbours)
    await member_writes(emulator, agent, family, text="dinner?", user_id=ANA)
    assert list(notices(hass, agent)) == [neighbours]


async def test_a_dismissed_notice_stays_dismissed_and_naming_elsewhere_clears_one(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    agent = await start(hass, emulator)
    family, _ = await family_group(emulator, agent)
    neighbours = await add_group(emulator, agent, "Neighbours", [ANA, BEN])
    await member_writes(emulator, agent, family, text="hi", user_id=ANA)
    await member_writes(emulator, agent, neighbours, text="parcel?", user_id=BEN)
    await noticed(hass, agent, family)
    await noticed(hass, agent, neighbours)

    # "Ignore" in the repairs dialog.
    client = await hass_ws_client(hass)
    issue = notice_id(agent.entry.entry_id, family)
    await client.send_json_auto_id(
        {"type": "repairs/ignore_issue", "domain": DOMAIN, "issue_id": issue, "ignore": True}
    )
    assert (await client.receive_json())["success"]
    # Its next messages, and a reload, do not bring it back.
    await member_writes(emulator, agent, family, text="still there?", user_id=BEN)
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await hass.async_block_till_done()
    await member_writes(emulator, agent, family, text="hello?", user_id=ANA)
    assert notices(hass, agent)[family].dismissed_version is not None

    # Named with "Add conversation" instead of the notice: the notice goes.
    await name_conversation(hass, agent, neighbours, "Neighbours")
    await wait_until(lambda: neighbours not in notices(hass, agent))

    # Without a running agent the fix flow says so, translated, and names nothing.
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    (stopped,) = await fix(hass, agent, family)
    assert (stopped["type"], stopped["reason"]) == (FlowResultType.ABORT, "agent_not_loaded")
    assert "not running" in strings()["issues"][NEW_GROUP]["fix_flow"]["abort"]["agent_not_loaded"]
    assert subentry_of(agent, family) is None

    # The entry removed, its notices go with it (the dismissed one too).
    assert await hass.config_entries.async_remove(agent.entry.entry_id)
    await hass.async_block_till_done()
    assert notices(hass, agent) == {}


async def test_groups_a_relay_invents_raise_a_bounded_number_of_notices(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    # The relay makes up groups, each with a "member" writing in it.
    invented = [
        await add_group(emulator, agent, f"Invented {n}", [ANA, BEN])
        for n in range(MAX_GROUP_NOTICES + 2)
    ]
    for group_id in invented:
        await member_writes(emulator, agent, group_id, text="join us", user_id=BEN)
    shown = notices(hass, agent)
    assert len(shown) == MAX_GROUP_NOTICES
    assert set(shown) == set(invented[:MAX_GROUP_NOTICES])
    # "Add conversation" still lists every one of them.
    form = await hass.config_entries.subentries.async_init(
        (agent.entry.entry_id, "conversation"), context={"source": "user"}
    )
    options = form["data_schema"].schema["conversation_id"].config["options"]
    assert {o["value"] for o in options} == set(invented)
    hass.config_entries.subentries.async_abort(form["flow_id"])

    # Once one is named, there is room: the next message of a group without a notice
    # raises its notice, and the bound holds again.
    (done,) = (await fix(hass, agent, invented[0], "Real group"))[1:]
    assert done["type"] is FlowResultType.CREATE_ENTRY
    for group_id in invented[MAX_GROUP_NOTICES:]:
        await member_writes(emulator, agent, group_id, text="still here", user_id=BEN)
    shown = notices(hass, agent)
    assert set(shown) == set(invented[1 : MAX_GROUP_NOTICES + 1])
    # The README says the bound as it is.
    assert f"at most {MAX_GROUP_NOTICES} such repairs" in README.read_text().replace("\n", " ")


async def test_a_notice_of_a_group_the_agent_does_not_know_names_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    family, _ = await family_group(emulator, agent)
    await member_writes(emulator, agent, family, text="hi", user_id=ANA)
    await noticed(hass, agent, family)
    # Notices of groups the agent has not seen (or no relay id at all): the naming flow's
    # refusal, translated, and no subentry.
    for unknown in ("conv_gone", "no id\u0000"):
        async_notice_group(hass, agent.entry, unknown)
        form, done = await fix(hass, agent, unknown, "Ghosts")
        assert form["type"] is FlowResultType.FORM
        assert (done["type"], done["reason"]) == (FlowResultType.ABORT, "unknown_conversation")
        shown = done["description_placeholders"]["conversation_id"]
        assert shown.startswith(markdown_text(unknown[:5])), shown
    abort = strings()["issues"][NEW_GROUP]["fix_flow"]["abort"]["unknown_conversation"]
    assert "{conversation_id}" in abort
    # Only the owner's direct conversation (named with the entry) is named.
    assert [s.title for s in agent.entry.subentries.values()] == ["Owner"]
    assert not hass.config_entries.subentries.async_progress()


async def test_what_the_relay_names_is_shown_as_text_not_markdown(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    # A "member" whose id is a link and some HTML, in a group the relay made up.
    member = "usr_[verify](evil.example)<img>"
    group_id = await add_group(emulator, agent, "Invented", [member])
    await member_writes(emulator, agent, group_id, text="hi", user_id=member)
    await noticed(hass, agent, group_id)
    (form,) = await fix(hass, agent, group_id)
    shown = form["description_placeholders"]["conversation"]
    assert markdown_text(member) in shown
    # No markdown or HTML mark is left unescaped.
    assert re.search(r"(?<!\\)[\[\]()<>]", shown) is None, shown
    assert markdown_text("a_b [c](d) <e>") == "a\\_b \\[c\\]\\(d\\) \\<e\\>"


# Group ids a hostile relay chooses: markdown (an image and a link of its own) and outer spaces.
MARKDOWN_ID = "![x](http://relay/img.png) [click](http://relay)"
SPACED_ID = "  conv_spaced  "
UNESCAPED = re.compile(r"(?<!\\)[!\[\]()<>:/]")


async def test_relay_made_group_ids_are_text_and_named_exactly_as_received(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    for group_id in (MARKDOWN_ID, SPACED_ID):
        await add_group(emulator, agent, group_id.strip(), [ANA, BEN], conversation_id=group_id)
        await member_writes(emulator, agent, quote(group_id, safe=""), text="hi", user_id=BEN)
        await noticed(hass, agent, group_id)

    # The "added to a group" dialog shows the id as text: no image, no link of the relay's.
    (form,) = await fix(hass, agent, MARKDOWN_ID)
    shown = form["description_placeholders"]["conversation"]
    assert markdown_text(MARKDOWN_ID) in shown
    assert UNESCAPED.search(shown) is None, shown
    hass.data["repairs"]["flow_manager"].async_abort(form["flow_id"])

    # "Add conversation" given the id without its spaces names nothing: no such group.
    aborted = await name_flow(hass, agent, SPACED_ID.strip(), "Trimmed")
    assert (aborted["type"], aborted["reason"]) == (FlowResultType.ABORT, "unknown_conversation")

    # A refusal that names an id shows it as text too (the abort is markdown).
    ghost = "[gone](http://relay) <img src=x>"
    async_notice_group(hass, agent.entry, ghost)
    _, done = await fix(hass, agent, ghost, "Ghost")
    assert (done["type"], done["reason"]) == (FlowResultType.ABORT, "unknown_conversation")
    assert done["description_placeholders"]["conversation_id"] == markdown_text(ghost)
    assert UNESCAPED.search(done["description_placeholders"]["conversation_id"]) is None

    # Both are named, each under the very id the relay gave (outer spaces kept).
    for group_id, name in ((MARKDOWN_ID, "Relay"), (SPACED_ID, "Spaced")):
        done = (await fix(hass, agent, group_id, name))[-1]
        assert done["type"] is FlowResultType.CREATE_ENTRY, done
        subentry = subentry_of(agent, group_id)
        assert subentry is not None
        assert (subentry.title, dict(subentry.data)) == (name, {"conversation_id": group_id})
        assert await kept_recipient(agent, group_id) == f"group:{group_id}"
    assert list(notices(hass, agent)) == [ghost]  # its refusal named nothing
