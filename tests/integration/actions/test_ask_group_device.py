"""`pacerelle.ask` in a group: the answering device named in the response is the device
whose trust made the answer count (the one that delivered the member's group key), not
the one the relay names: that one the agent never judged (no trust decision can be taken
for it) and the relay may name any. And a member who left answers no question, not even
one asked in reply to them.
"""

from homeassistant.core import HomeAssistant

from tests.helpers.emulator import EmulatorHandle
from tests.helpers.group_ask import (
    answer,
    answered_event,
    ask,
    relay_forges_answer,
    trusted_family,
    widget_on_every_phone,
)
from tests.helpers.groups import ANA, BEN, DEVICES, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import call


async def test_the_response_names_the_device_judged_and_it_can_be_blocked(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _, group_id, members = await trusted_family(hass, emulator)
    question = ask(hass, group_id, "collective")
    widget_id = await widget_on_every_phone(emulator, group_id, members, "collective")
    # Ana answers from her second phone; her key came over her first phone's session.
    answer_id = await answer(emulator, group_id, widget_id, ANA, True, device_id="2")

    result = await question
    assert (result["status"], result["sender_id"]) == ("answered", ANA)
    assert result["answer_message_id"] == answer_id
    assert result["sender_device_id"] == "1"
    # What the script is told it can act on: the device is the one the trust book knows.
    blocked = await call(
        hass, "block_device", {"person_id": ANA, "sender_device_id": result["sender_device_id"]}
    )
    assert blocked["trust_state"] == "blocked"


async def test_an_asker_who_left_no_longer_answers_their_own_question(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator)
    asked = await member_writes(emulator, agent, group_id, text="porch light?", user_id=BEN)
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    question = hass.async_create_task(
        call(
            hass,
            "ask",
            {
                "kind": "confirm",
                "title": "Leave the porch light on?",
                "source_message_id": asked["message_id"],
                "timeout": 1.5,
            },
        )
    )
    # The question goes to the group of now (the agent fetched the new epoch's keys).
    entries = await emulator.wait_inbox(group_id, 2 * len(DEVICES))
    assert {e["user_id"] for e in entries} == set(members[:2])
    widget_id = str(entries[0]["payload"]["id"])
    # Ben's phone is still trusted and the agent still holds his old key.
    forged = await relay_forges_answer(emulator, agent, group_id, BEN, widget_id)
    await wait_until(lambda: answered_event(agent, forged))

    result = await question
    assert (result["status"], result["sender_id"]) == ("timeout", None)
