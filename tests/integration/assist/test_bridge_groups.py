"""Assist in groups (option `assist_in_groups`), through the emulator: three members with
two phones each. Off, the group is left alone (tests/scenarios/test_group_conversations.py)."""

import pytest
from homeassistant.core import HomeAssistant

from tests.helpers.agent import start_agent
from tests.helpers.assist import light_state
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ANA, ASSIST_IN_GROUPS, DEVICES, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import trust


@pytest.mark.usefixtures("kitchen_light")
async def test_a_trusted_member_drives_assist_and_everyone_reads_the_answer(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, options=ASSIST_IN_GROUPS)
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
