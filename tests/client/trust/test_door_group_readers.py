"""A group message is sealed once for all the group's members, and every member's device
holds every other's key of the epoch: while a device the user blocked holds one, nothing
is sealed for the group (client/trust/door.py `check_group`), on every path (notify on the
named conversation, an answer, the outbox at its flush), until that device leaves the
group. Attacked through the emulator: Ben's phone, blocked, is still in the family group."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.events import EVENT_MESSAGE_STATUS
from custom_components.pacerelle.issues.blocked_groups import blocked_issue_id
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import BEN, member_writes, named_family
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, refused, trust

SECRET = "The alarm code is 4711"


async def family_with_bens_phone_blocked(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> tuple[Agent, str, str]:
    """The family group named "Family"; Ben wrote there from the phone that delivered his
    key, and the user blocked that phone. (agent, group id, Ben's message id)"""
    agent = await start_agent(hass, emulator)
    group_id, _ = await named_family(hass, emulator, agent)
    asked = await member_writes(emulator, agent, group_id, text="door?", user_id=BEN)
    await call(hass, "block_device", {"person_id": BEN, "sender_device_id": "1"})
    return agent, group_id, asked["message_id"]


async def notify_family(hass: HomeAssistant, text: str) -> None:
    await hass.services.async_call(
        "notify", "send_message", {"entity_id": "notify.family", "message": text}, blocking=True
    )


async def test_nothing_is_sealed_for_a_group_a_blocked_phone_is_in(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, asked = await family_with_bens_phone_blocked(hass, emulator)
    with pytest.raises(HomeAssistantError) as caught:
        await notify_family(hass, SECRET)
    assert caught.value.translation_key == "blocked_group_member"
    assert "usr_ben device 1" in str(caught.value)
    raw = {"text": SECRET, "conversation_id": group_id, "to": f"group:{group_id}"}
    await refused(hass, "send_message", raw, "blocked_group_member")
    # Answers in the group, to Ana's request or to Ben's own from before: his phone would
    # read them.
    ana = await member_writes(emulator, agent, group_id, text="lights?", user_id="usr_ana")
    for request in (ana["message_id"], asked):
        answer = {"text": SECRET, "source_message_id": request}
        await refused(hass, "send_message", answer, "blocked_group_member")
    assert [e for e in await emulator.inbox(group_id) if e.get("text") == SECRET] == []

    # A repair says why, naming the group and the phone.
    issue = ir.async_get(hass).async_get_issue(
        DOMAIN, blocked_issue_id(agent.entry.entry_id, group_id)
    )
    assert issue is not None
    assert issue.translation_placeholders == {
        "agent_name": "Home",
        "group_title": "Family",
        "group": "Family",
        "person": "usr\\_ben",
        "device": "1",
    }

    # Ben is taken out of the group: the members' new keys leave his phone out.
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    await notify_family(hass, "Dinner")
    entries = await emulator.wait_inbox(group_id, 4)
    assert {(e["user_id"], e["text"]) for e in entries} >= {("usr_ana", "Dinner")}
    assert BEN not in {e["user_id"] for e in entries}
    assert SECRET not in {e.get("text") for e in entries}
    await wait_until(lambda: not blocked_issues(hass))


def blocked_issues(hass: HomeAssistant) -> list[str]:
    return [
        i for (d, i) in ir.async_get(hass).issues if d == DOMAIN and i.startswith("blocked_in_")
    ]


async def test_the_repair_goes_when_the_phone_is_trusted_again_and_with_the_agent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, _ = await family_with_bens_phone_blocked(hass, emulator)
    assert blocked_issues(hass) == [blocked_issue_id(agent.entry.entry_id, group_id)]
    await trust(hass, emulator, BEN, "1")
    assert blocked_issues(hass) == []
    await notify_family(hass, "Dinner")  # the group may be written to again
    await call(hass, "block_device", {"person_id": BEN, "sender_device_id": "1"})
    assert blocked_issues(hass) == [blocked_issue_id(agent.entry.entry_id, group_id)]
    # Worked out again at each start, and gone with the loaded entry.
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await hass.async_block_till_done()
    assert blocked_issues(hass) == [blocked_issue_id(agent.entry.entry_id, group_id)]
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    assert blocked_issues(hass) == []


async def test_the_flush_fails_a_group_send_once_a_phone_in_the_group_is_blocked(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await named_family(hass, emulator, agent)
    await member_writes(emulator, agent, group_id, text="hi", user_id=BEN)
    statuses = async_capture_events(hass, EVENT_MESSAGE_STATUS)
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: agent.runtime.status.state.value != "connected")
    raw = {"text": SECRET, "conversation_id": group_id, "to": f"group:{group_id}"}
    sent = await call(hass, "send_message", raw)
    assert len(agent.runtime.agent.data.queued) == 1
    await call(hass, "block_device", {"person_id": BEN, "sender_device_id": "1"})
    await emulator.faults(reset=True)

    def status_of(message_id: str) -> list[str]:
        return [e.data["status"] for e in statuses if e.data["message_id"] == message_id]

    await wait_until(lambda: "failed" in status_of(sent["message_id"]), within=20)
    assert "sent" not in status_of(sent["message_id"])
    assert [e for e in await emulator.inbox(group_id) if e.get("text") == SECRET] == []
