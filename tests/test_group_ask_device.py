"""`pacerelle.ask` in a group: the answering device named in the response is the device
whose trust made the answer count (the one that delivered the member's group key), not
the one the relay names: that one the agent never judged (no trust decision can be taken
for it) and the relay may name any.
"""

from homeassistant.core import HomeAssistant

from tests.emulator_fixtures import EmulatorHandle
from tests.services_harness import call
from tests.test_group_ask import ANA, answer, ask, trusted_family, widget_on_every_phone


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
