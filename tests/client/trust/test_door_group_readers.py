"""A group message is sealed once for all the group's members, and every member's device
holds every other's key of the epoch: while a device the user blocked holds one, nothing
is sealed for the group (client/trust/door.py `check_group`), on every path (notify on the
named conversation, an answer, the outbox at its flush), until that device leaves the
group. Attacked through the emulator: Ben's phone, blocked, is still in the family group."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_MESSAGE_STATUS
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import BEN, member_writes, named_family
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, refused

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

    # Ben is taken out of the group: the members' new keys leave his phone out.
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    await notify_family(hass, "Dinner")
    entries = await emulator.wait_inbox(group_id, 4)
    assert {(e["user_id"], e["text"]) for e in entries} >= {("usr_ana", "Dinner")}
    assert BEN not in {e["user_id"] for e in entries}
    assert SECRET not in {e.get("text") for e in entries}


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
