"""`pacerelle.ask` answered from a device that is not trusted yet (issue 29, the family
dinner poll): the person is told in Pacerelle that the answer does not count yet and why,
with the device's verification code; the owner has a repair; trusting the device while
the question is open makes the held answer count; never trusted, the poll still ends."""

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.repairs import issue_id
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.group_ask import (
    answer,
    answered_event,
    ask,
    trusted_family,
    widget_on_every_phone,
)
from tests.helpers.groups import ANA, BEN, DEVICES, member_writes
from tests.helpers.readme import example
from tests.helpers.runtime import wait_until
from tests.helpers.services import trust as trust_device

NOT_YET = "Your answer does not count yet"


def _told(entries: list[dict[str, Any]], answer_id: str) -> list[dict[str, Any]]:
    return [
        e
        for e in entries
        if e["kind"] == "text"
        and e["reply_to_message_id"] == answer_id
        and e["text"].startswith(NOT_YET)
    ]


async def test_an_untrusted_answer_is_told_held_and_counts_once_trusted(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator, trusted=("owner", ANA))
    question = ask(hass, group_id, "individual", timeout=30)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    untrusted = await answer(emulator, group_id, widget_id, BEN, True)
    await wait_until(lambda: answered_event(agent, untrusted))

    # Ben is told, in the group (a reply to his answer), with his phone's code.
    trust = agent.runtime.trust
    assert trust is not None
    device = trust.book.get(BEN, "1")
    assert device is not None
    group_size = len(members) * len(DEVICES)
    entries = await emulator.wait_inbox(group_id, 2 * group_size)
    [told, *_] = _told(entries, untrusted)
    assert "(unverified)" in told["text"]
    assert device.code in told["text"]
    # The owner has the repair that trusts it.
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id(agent.entry.entry_id, BEN, "1"))
    assert issue is not None

    others = [
        await answer(emulator, group_id, widget_id, ANA, False),
        await answer(emulator, group_id, widget_id, members[0], True),
    ]
    await wait_until(lambda: all(answered_event(agent, other) for other in others))
    assert not question.done()  # Ben's answer does not count yet: every member waited for
    decided = await trust_device(hass, emulator, BEN, "1")
    assert decided["trust_state"] == "trusted"
    result = await question  # well before its 30 s
    assert sorted((a["sender_id"], a["value"]) for a in result["answers"]) == sorted(
        [(BEN, True), (ANA, False), (members[0], True)]
    )
    await wait_until(
        lambda: untrusted not in {r.message_id for r in agent.runtime.agent.pending_requests()}
    )


async def test_the_dinner_poll_ends_by_itself_with_a_member_never_trusted(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator, trusted=("owner", ANA))
    poll = example("Family dinner poll")
    poll["actions"][0]["data"]["timeout"] = 3  # half an hour in the README
    assert await async_setup_component(hass, "automation", {"automation": [poll]})
    await hass.async_block_till_done()
    await member_writes(emulator, agent, group_id, text="dinner?", user_id=ANA)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    untrusted = await answer(emulator, group_id, widget_id, BEN, True)
    await answer(emulator, group_id, widget_id, ANA, True)
    await answer(emulator, group_id, widget_id, members[0], False)
    group_size = len(members) * len(DEVICES)
    # The question, Ben told, then the result at the timeout: the poll does not hang.
    entries = await emulator.wait_inbox(group_id, 3 * group_size, within=15)
    assert _told(entries, untrusted)
    results = {e["text"] for e in entries if e["text"].startswith("Dinner at home")}
    assert results == {"Dinner at home: 1 of 2."}
    state = hass.states.get("automation.pacerelle_family_group_dinner_poll")
    assert state is not None
    await wait_until(lambda: hass.states.get(state.entity_id).attributes.get("current") == 0)
