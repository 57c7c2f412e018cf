"""`pacerelle.ask` in a group with `response_mode`, through the emulator: three members with
two phones each, answers from the members' own devices (and one forged by the relay).

`collective`: the first member's answer settles it; `individual`: each member answers,
the action returns once all did (or at the timeout) with every answer in `answers`. Only
current members count, from trusted devices; the mode is refused outside groups.
"""

import asyncio
import time

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.widget_answers import (
    Addressee,
    MemberAnswers,
    group_members,
)
from tests.helpers.agent import start_agent
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
from tests.helpers.readme import example
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, human_writes, refused

# A question's timeout that the members who answer beat even on a loaded machine (the
# question reaches six phones, then two answers come back); the silent member keeps
# the action waiting until then.
ANSWERS_WITHIN = 8.0


async def test_collective_is_settled_by_a_member_who_did_not_ask(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator)
    asked = await member_writes(emulator, agent, group_id, text="Porch light?", user_id=ANA)
    question = hass.async_create_task(
        call(
            hass,
            "ask",
            {
                "kind": "confirm",
                "title": "Leave the porch light on?",
                "source_message_id": asked["message_id"],
                "response_mode": "collective",
                "timeout": 10,
            },
        )
    )
    widget_id = await widget_on_every_phone(emulator, group_id, members, "collective")
    answer_id = await answer(emulator, group_id, widget_id, BEN, False)

    result = await question
    assert set(result) == {
        "widget_id",
        "message_id",
        "status",
        "value",
        "answer_message_id",
        "sender_id",
        "sender_device_id",
        "answered_at",
    }
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, BEN)
    assert result["answer_message_id"] == answer_id
    pending = {r.message_id for r in agent.runtime.agent.pending_requests()}
    assert answer_id not in pending


async def test_individual_collects_every_member_and_returns_before_the_timeout(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator)
    started = time.monotonic()
    question = ask(hass, group_id, "individual", timeout=30)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    first = await answer(emulator, group_id, widget_id, ANA, True)
    await wait_until(lambda: answered_event(agent, first))
    # Ana changes her mind: her first answer counts, this one is ignored (and left pending).
    again = await answer(emulator, group_id, widget_id, ANA, False)
    await wait_until(lambda: answered_event(agent, again))
    others = [
        await answer(emulator, group_id, widget_id, members[0], False),
        await answer(emulator, group_id, widget_id, BEN, True, device_id="1"),
    ]

    result = await question
    assert time.monotonic() - started < 10  # every member answered: no waiting for 30 s
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", True, ANA)
    assert result["answer_message_id"] == first
    assert [
        (a["sender_id"], a["value"], a["cancelled"], a["answer_message_id"])
        for a in result["answers"]
    ] == [
        (ANA, True, False, first),
        (members[0], False, False, others[0]),
        (BEN, True, False, others[1]),
    ]
    assert {a["sender_device_id"] for a in result["answers"]} == {"1"}
    assert all(a["answered_at"] for a in result["answers"])
    pending = {r.message_id for r in agent.runtime.agent.pending_requests()}
    assert pending.isdisjoint([first, *others])
    assert again in pending


async def test_individual_with_a_silent_member_returns_at_the_timeout(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _, group_id, members = await trusted_family(hass, emulator)
    question = ask(hass, group_id, "individual", timeout=ANSWERS_WITHIN)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    await answer(emulator, group_id, widget_id, BEN, False)
    await answer(emulator, group_id, widget_id, ANA, True)

    result = await question
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, BEN)
    assert [(a["sender_id"], a["value"]) for a in result["answers"]] == [(BEN, False), (ANA, True)]


async def test_individual_without_any_answer_times_out_with_no_answers(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _, group_id, _ = await trusted_family(hass, emulator)
    result = await ask(hass, group_id, "individual", timeout=1)
    assert (result["status"], result["value"], result["answers"]) == ("timeout", None, [])


async def test_response_mode_in_a_direct_conversation_is_refused_and_nothing_is_sent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    asked = await human_writes(emulator, agent, text="Porch light?")
    for target in ({"source_message_id": asked["message_id"]}, {}):
        error = await refused(
            hass,
            "ask",
            # Bounded: without the refusal, the question would be asked and waited for.
            {"kind": "confirm", "title": "On?", "response_mode": "collective", "timeout": 1}
            | target,
            "response_mode_not_group",
            response=True,
        )
        assert error.translation_placeholders == {"response_mode": "collective"}
    assert await emulator.inbox(agent.conversation_id) == []


async def test_a_removed_members_answer_does_not_count(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator)
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    question = ask(hass, group_id, "collective")
    widget_id = await widget_on_every_phone(emulator, group_id, members[:2], "collective")
    # Ben's phone is still trusted and the agent still holds his old key: only his
    # membership is gone.
    forged = await relay_forges_answer(emulator, agent, group_id, BEN, widget_id)
    await wait_until(lambda: answered_event(agent, forged))
    await answer(emulator, group_id, widget_id, ANA, False)

    result = await question
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, ANA)


async def test_an_untrusted_devices_answer_does_not_count(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator, trusted=("owner", ANA))
    question = ask(hass, group_id, "individual", timeout=ANSWERS_WITHIN)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    untrusted = await answer(emulator, group_id, widget_id, BEN, True)
    await wait_until(lambda: answered_event(agent, untrusted))
    await answer(emulator, group_id, widget_id, ANA, False)

    result = await question
    assert [(a["sender_id"], a["value"]) for a in result["answers"]] == [(ANA, False)]
    assert untrusted in {r.message_id for r in agent.runtime.agent.pending_requests()}


async def test_readme_family_dinner_poll_example(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await trusted_family(hass, emulator)
    assert await async_setup_component(
        hass, "automation", {"automation": [example("Family dinner poll")]}
    )
    await hass.async_block_till_done()
    asked = await member_writes(emulator, agent, group_id, text="Dinner?", user_id=BEN)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    answers = [
        await answer(emulator, group_id, widget_id, member, value)
        for member, value in ((BEN, True), (members[0], False), (ANA, True))
    ]
    # The question (6 copies), then the poll's result (6), well before its half hour.
    entries = await emulator.wait_inbox(group_id, 2 * len(members) * len(DEVICES))
    assert {e["text"] for e in entries if e["kind"] == "text"} == {"Dinner at home: 2 of 3."}

    def handled() -> bool:
        pending = {r.message_id for r in agent.runtime.agent.pending_requests()}
        return pending.isdisjoint([asked["message_id"], *answers])

    await wait_until(handled)


async def test_individual_cancels_count_as_answers_and_the_first_real_answer_leads(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _, group_id, members = await trusted_family(hass, emulator)
    question = ask(hass, group_id, "individual", timeout=30)
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    for user_id in (members[0], ANA):
        await emulator.admin(
            "POST",
            f"/conversations/{group_id}/send",
            {"widget_response": {"ref": widget_id, "cancelled": True}, "user_id": user_id},
        )
    await answer(emulator, group_id, widget_id, BEN, False)

    result = await asyncio.wait_for(question, 10)  # all three answered: no 30 s wait
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", False, BEN)
    assert [(a["sender_id"], a["cancelled"], a["value"]) for a in result["answers"]] == [
        (members[0], True, None),
        (ANA, True, None),
        (BEN, False, False),
    ]


def test_members_are_the_senders_of_the_newest_epochs_keys() -> None:
    def key(sender: str | None, epoch: int, conversation: str = "c1") -> GroupKey:
        return GroupKey(conversation, f"k-{sender}-{epoch}", epoch, bytes(32), sender)

    keys = [
        key("usr_a", 1),
        key("usr_gone", 1),  # left: no key of epoch 2
        key("usr_a", 2),
        key("usr_b", 2),
        key(None, 2),  # stored before senders were recorded
        key("agt_1", 2),  # the agent itself is no member to wait for
        key("usr_other", 3, "c2"),
    ]
    assert group_members(keys, "c1", "agt_1") == {"usr_a", "usr_b"}
    assert group_members(keys, "c3", "agt_1") == frozenset()
    # Knowing nobody: anyone in the conversation counts, and `individual` never completes.
    nobody = Addressee.group("c1", frozenset())
    assert nobody.refusal("c1", "usr_x") is None
    assert nobody.refusal("c2", "usr_x") is not None
    collected = MemberAnswers()
    assert collected.add("usr_x", {})
    assert not collected.add("usr_x", {})
    assert not collected.complete(frozenset())
    assert collected.complete(frozenset({"usr_x"}))
