"""Assist in groups (option `assist_in_groups`), through the emulator: three members with
two phones each. Off, the group is left alone (tests/scenarios/test_group_conversations.py)."""

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.options import CONF_ASSIST_AGENT, CONF_ASSIST_IN_GROUPS
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import trust

ANA = "usr_ana"
OPTIONS = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_ASSIST_IN_GROUPS: True}


def light_state(hass: HomeAssistant) -> str:
    light = hass.states.get(KITCHEN)
    assert light is not None
    return light.state


@pytest.mark.usefixtures("kitchen_light")
async def test_a_trusted_member_drives_assist_and_everyone_reads_the_answer(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, options=OPTIONS)
    group_id, members = await family_group(emulator, agent)
    everyone = sorted((member, device) for member in members for device in DEVICES)

    # Ana is unverified: her command is not run, and the group is told why, with the code
    # of the device judged (the one that delivered her key: her first, not this second one).
    refused = await member_writes(
        emulator, agent, group_id, text="turn on the kitchen light", user_id=ANA, device_id="2"
    )
    assert refused["trust_state"] == "unverified"
    told = await emulator.wait_inbox(group_id, len(everyone))
    assert sorted((e["user_id"], e["device_id"]) for e in told) == everyone
    assert {e["reply_to_message_id"] for e in told} == {refused["message_id"]}
    code = emulator.emulator.humans.device(ANA, "1").describe()["verification_code"]
    assert all("does not trust" in e["text"] and code in e["text"] for e in told), told
    assert light_state(hass) == "off"
    pending = [r.message_id for r in agent.runtime.agent.pending_requests()]
    assert pending == [refused["message_id"]]

    # Trusted (her key's device), she asks again from her second phone: it runs.
    await trust(hass, emulator, ANA, "1")
    asked = await member_writes(
        emulator, agent, group_id, text="turn on the kitchen light", user_id=ANA, device_id="2"
    )
    assert asked["trusted"] is True
    entries = await emulator.wait_inbox(group_id, 2 * len(everyone))
    answers = [e for e in entries if e["reply_to_message_id"] == asked["message_id"]]
    assert sorted((e["user_id"], e["device_id"]) for e in answers) == everyone
    assert len({e["text"] for e in answers}) == 1
    assert light_state(hass) == "on"
    await wait_until(
        lambda: [r.message_id for r in agent.runtime.agent.pending_requests()]
        == [refused["message_id"]]
    )
