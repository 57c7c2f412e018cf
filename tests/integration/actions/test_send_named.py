"""Actions that take a named conversation by its entity (`entity_id: notify.family`), through
the emulator: the family group named "Family" is reached by send_message, send_widget, ask and
read by get_history; raw ids keep working; anything that is not one conversation of the
chosen agent is a translated refusal that sends nothing."""

import string
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import Agent, start_agent
from tests.helpers.conversations import name_conversation, strings
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.services import call, human_writes, received, refused, trust

ANA, BEN = "usr_ana", "usr_ben"


async def named_family(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> tuple[Agent, str, list[str]]:
    """The family group, named "Family"; the owner's phone wrote (trusted on first use)."""
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    assert await name_conversation(hass, agent, group_id, "Family") == "notify.family"
    return agent, group_id, members


def every_phone(members: list[str]) -> list[tuple[str, str]]:
    return sorted((member, device_id) for member in members for device_id in DEVICES)


async def test_send_message_and_widget_reach_the_group_named_by_its_entity(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await named_family(hass, emulator)
    sent = await call(hass, "send_message", {"entity_id": "notify.family", "text": "Dinner"})
    assert (sent["conversation_id"], sent["to"]) == (group_id, f"group:{group_id}")
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert sorted((e["user_id"], e["device_id"]) for e in entries) == every_phone(members)
    assert {(e["text"], e["message_id"]) for e in entries} == {("Dinner", sent["message_id"])}

    # As an automation writes it: `target: entity_id: ...` (Home Assistant passes a list).
    widget = {"type": "widget.standard", "v": 1, "id": "lights-1", "kind": "confirm"}
    widget["spec"] = {"title": "Lights off?"}
    shown = await hass.services.async_call(
        DOMAIN,
        "send_widget",
        {"widget": widget},
        target={"entity_id": ["notify.family"]},
        blocking=True,
        return_response=True,
    )
    assert shown is not None
    assert (shown["conversation_id"], shown["widget_id"]) == (group_id, "lights-1")
    entries = await emulator.wait_inbox(group_id, 2 * len(members) * len(DEVICES))
    widgets = [e for e in entries if e["message_id"] == shown["message_id"]]
    assert sorted((e["user_id"], e["device_id"]) for e in widgets) == every_phone(members)
    # Nothing of it went to the owner's direct conversation (only its first answer).
    assert await emulator.inbox(agent.conversation_id) == []

    # get_history reads the named conversation only.
    history = await call(hass, "get_history", {"entity_id": "notify.family"})
    assert {r["conversation_id"] for r in history["requests"]} == {group_id}
    assert {r["message_id"] for r in history["replies"]} == {
        sent["message_id"],
        shown["message_id"],
    }


async def test_raw_ids_and_the_agents_own_entity_keep_their_meaning(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, members = await named_family(hass, emulator)
    # Neither an entity nor an id: the owner, as before.
    plain = await call(hass, "send_message", {"text": "To you"})
    # The agent's own notify entity: the owner's direct conversation.
    owned = await call(hass, "send_message", {"entity_id": "notify.home", "text": "Also you"})
    for reply in (plain, owned):
        assert (reply["conversation_id"], reply["to"]) == (
            agent.conversation_id,
            agent.installed.owner_id,
        )
    assert [m["text"] for m in await received(emulator, agent, 2)] == ["To you", "Also you"]
    # The raw id still reaches the group, as the entity does.
    raw = {"conversation_id": group_id, "to": f"group:{group_id}", "text": "Raw"}
    assert (await call(hass, "send_message", raw))["conversation_id"] == group_id
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {e["text"] for e in entries} == {"Raw"}


async def test_ask_a_group_by_its_entity(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent, group_id, members = await named_family(hass, emulator)
    await member_writes(emulator, agent, group_id, text="hi", user_id=BEN, device_id="1")
    assert (await trust(hass, emulator, BEN, "1"))["trust_state"] == "trusted"
    question = hass.async_create_task(
        call(
            hass,
            "ask",
            {
                "entity_id": "notify.family",
                "kind": "confirm",
                "title": "Porch light on?",
                # Accepted: the entity's conversation is a group (refused for one person).
                "response_mode": "collective",
                "timeout": 10,
            },
        )
    )
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert sorted((e["user_id"], e["device_id"]) for e in entries) == every_phone(members)
    widget_id = entries[0]["payload"]["id"]
    body = {"widget_response": {"ref": widget_id, "value": True}, "user_id": BEN, "device_id": "1"}
    answered = await emulator.admin("POST", f"/conversations/{group_id}/send", body)
    result = await question
    assert (result["status"], result["value"], result["sender_id"]) == ("answered", True, BEN)
    assert result["answer_message_id"] == answered["message_id"]


def message(key: str, placeholders: dict[str, str]) -> str:
    """The translated message of an exception key, its placeholders filled (all of them)."""
    text = str(strings()["exceptions"][key]["message"])
    used = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    assert used == set(placeholders), (key, used)
    return text.format(**placeholders)


SENSOR = "sensor.home_connection"  # the agent's own, no conversation
# (call data, translated error, its placeholders)
REFUSALS: list[tuple[dict[str, Any], str, dict[str, str]]] = [
    # Both the entity and a raw field for the same thing.
    (
        {"entity_id": "notify.family", "conversation_id": "conv-x"},
        "conversation_conflict",
        {"fields": "conversation_id"},
    ),
    ({"entity_id": "notify.family", "to": ANA}, "conversation_conflict", {"fields": "to"}),
    # An answer goes where its request came from.
    (
        {"entity_id": "notify.family", "source_message_id": "m-1"},
        "target_conflict",
        {"fields": "entity_id"},
    ),
    # Entities that are no conversation: unknown, another integration's, the agent's sensor.
    ({"entity_id": "notify.nobody"}, "not_a_conversation", {"entity_id": "notify.nobody"}),
    ({"entity_id": "notify.elsewhere"}, "not_a_conversation", {"entity_id": "notify.elsewhere"}),
    ({"entity_id": SENSOR}, "not_a_conversation", {"entity_id": SENSOR}),
    (
        {"entity_id": ["notify.family", "notify.home"]},
        "one_conversation",
        {"entity_ids": "notify.family, notify.home"},
    ),
]
EXTRA: dict[str, dict[str, Any]] = {
    "send_message": {"text": "Nope"},
    "ask": {"kind": "confirm", "title": "Nope?", "timeout": 5},
    "send_widget": {"widget": {"type": "widget.standard", "v": 1, "id": "w", "kind": "confirm"}},
    "get_history": {},
}


async def test_what_is_not_one_conversation_is_refused_translated_and_sends_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, group_id, _ = await named_family(hass, emulator)
    er.async_get(hass).async_get_or_create(
        "notify", "other_integration", "x", suggested_object_id="elsewhere"
    )
    assert agent.entity_id(hass, "sensor", "connection_state") == SENSOR
    for data, key, placeholders in REFUSALS:
        for service, extra in EXTRA.items():
            if service == "get_history" and ("to" in data or "source_message_id" in data):
                continue  # get_history takes no target, only a conversation
            if key == "one_conversation" and service in ("send_message", "send_widget"):
                continue  # a send takes several (one message each: tested below)
            error = await refused(hass, service, {**data, **extra}, key, response=True)
            assert error.translation_placeholders == placeholders, (service, data)
        assert message(key, placeholders)
    assert await emulator.inbox(group_id) == []
    assert await emulator.inbox(agent.conversation_id) == []


async def test_a_conversation_of_another_agent_is_refused_for_the_chosen_one(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _, group_id, _ = await named_family(hass, emulator)
    cottage = await start_agent(hass, emulator, name="Cottage")
    chosen = {"config_entry_id": cottage.entry.entry_id, "entity_id": "notify.family"}
    error = await refused(
        hass, "send_message", {**chosen, "text": "Hi"}, "conversation_other_agent", response=True
    )
    assert error.translation_placeholders == {"entity_id": "notify.family"}
    assert message("conversation_other_agent", {"entity_id": "notify.family"})
    assert await emulator.inbox(group_id) == []
    # With two agents, the entity alone says which one sends.
    sent = await call(hass, "send_message", {"entity_id": "notify.family", "text": "Hi"})
    assert sent["conversation_id"] == group_id


async def test_send_message_to_several_conversations_at_once(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """`target: entity_id: [notify.family, notify.home]`: one message each, in order; the
    answer is the first's, with every message under `messages`."""
    agent, group_id, members = await named_family(hass, emulator)
    sent = await hass.services.async_call(
        DOMAIN,
        "send_message",
        {"text": "Dinner is ready"},
        target={"entity_id": ["notify.family", "notify.home"]},
        blocking=True,
        return_response=True,
    )
    assert sent is not None
    owner = agent.installed.conversation_id
    messages = sent["messages"]
    assert [m["conversation_id"] for m in messages] == [group_id, owner]
    assert sent["message_id"] == messages[0]["message_id"]
    family = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {e["text"] for e in family} == {"Dinner is ready"}
    [home] = [e for e in await emulator.wait_inbox(owner, 1) if e["text"] == "Dinner is ready"]
    assert home["message_id"] == messages[1]["message_id"]


async def test_several_conversations_are_all_checked_before_anything_is_sent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    _agent, group_id, _members = await named_family(hass, emulator)
    before = len(await emulator.wait_inbox(group_id, 0))
    await refused(
        hass,
        "send_message",
        {"text": "Dinner", "entity_id": ["notify.family", "light.kitchen"]},
        "not_a_conversation",
    )
    assert len(await emulator.wait_inbox(group_id, 0)) == before
