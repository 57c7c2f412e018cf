"""Named conversations (the `conversation` subentry), driven as the frontend drives them,
against the emulator: a group of three is named, its notify entity reaches its members'
devices through the one send path (so a group with no trusted member gets nothing), and
removing the name removes only its entity."""

import json
from pathlib import Path
from typing import Any

import pytest
from homeassistant.components.notify import ATTR_MESSAGE, SERVICE_SEND_MESSAGE
from homeassistant.components.notify import DOMAIN as NOTIFY_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er

import custom_components.pacerelle
from custom_components.pacerelle.client import ConnectionState
from custom_components.pacerelle.const import SUBENTRY_CONVERSATION
from custom_components.pacerelle.issues.markdown import markdown_text
from tests.helpers.agent import start_agent
from tests.helpers.conversations import (
    kept_recipient,
    name_flow,
    notify_of,
    start_naming,
    the_subentry,
)
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes, received

STRINGS = Path(custom_components.pacerelle.__file__).parent / "strings.json"
ANA, BEN = "usr_ana", "usr_ben"


def offered(form: Any) -> list[str]:
    """The conversation ids the form's list offers."""
    assert form["type"] is FlowResultType.FORM, form
    for marker, selector in form["data_schema"].schema.items():
        if str(marker) == "conversation_id":
            return [option["value"] for option in selector.config["options"]]
    raise AssertionError("no conversation list")


async def notify(hass: HomeAssistant, entity_id: str, message: str) -> None:
    data = {ATTR_ENTITY_ID: entity_id, ATTR_MESSAGE: message}
    await hass.services.async_call(NOTIFY_DOMAIN, SERVICE_SEND_MESSAGE, data, blocking=True)


def abort_text(reason: str) -> str:
    strings = json.loads(STRINGS.read_text())
    return str(strings["config_subentries"][SUBENTRY_CONVERSATION]["abort"][reason])


async def test_a_group_is_named_and_its_notify_reaches_all_its_members_devices(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    # The owner's phone wrote (trusted on first use): its session delivers the owner's key.
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)

    form = await start_naming(hass, agent)
    # The group, not the owner's direct conversation (the agent's own notify is that one).
    assert offered(form) == [group_id]
    (label,) = [o["label"] for o in form["data_schema"].schema["conversation_id"].config["options"]]
    assert all(member in label for member in members), label
    done = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": group_id, "name": "Family"}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    subentry = the_subentry(agent, group_id)
    # The subentry holds the conversation only; the agent's store keeps whom it reaches.
    assert (subentry.title, dict(subentry.data)) == ("Family", {"conversation_id": group_id})
    assert await kept_recipient(agent, group_id) == f"group:{group_id}"

    entity_id = notify_of(hass, agent, group_id)
    assert entity_id == "notify.family"
    entity = er.async_get(hass).async_get(entity_id)
    assert entity is not None
    assert entity.config_subentry_id == subentry.subentry_id
    # On the conversation's own device: the agent's device (and its entities) stay the
    # entry's (test_entity_conversations.py).
    assert entity.device_id not in (None, agent.device_id(hass))
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    # The owner's own notify entity is untouched.
    owner = er.async_get(hass).async_get("notify.home")
    assert owner is not None
    assert owner.config_subentry_id is None

    await notify(hass, entity_id, "Dinner is ready")
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    # Opened by the emulator on every member's device (each decrypts with the group key).
    assert sorted((e["user_id"], e["device_id"]) for e in entries) == sorted(
        (member, device_id) for member in members for device_id in DEVICES
    )
    assert {(e["text"], e["to"]) for e in entries} == {("Dinner is ready", f"group:{group_id}")}
    # Nothing of it went to the owner's direct conversation.
    assert await emulator.inbox(agent.conversation_id) == []

    # After a reload the name and its entity are back as they were.
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    assert notify_of(hass, agent, group_id) == entity_id
    await notify(hass, entity_id, "Again")
    entries = await emulator.wait_inbox(group_id, 2 * len(members) * len(DEVICES))
    assert sorted(e["text"] for e in entries).count("Again") == len(members) * len(DEVICES)


async def test_a_named_group_without_a_trusted_member_gets_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, groups={"Neighbours": [ANA, BEN]})
    group_id = agent.groups["Neighbours"]
    asked = await member_writes(emulator, agent, group_id, text="parcel?", user_id=BEN)
    assert asked["trusted"] is False
    named = await name_flow(hass, agent, group_id, "Neighbours")
    assert named["type"] is FlowResultType.CREATE_ENTRY
    entity_id = notify_of(hass, agent, group_id)
    assert entity_id is not None
    await wait_until(lambda: hass.states.get(entity_id) is not None)

    # The same refusal as pacerelle.send_message to the group: no trusted session
    # delivered any key of it, so nothing is sealed for the untrusted members' devices.
    with pytest.raises(HomeAssistantError) as refused:
        await notify(hass, entity_id, "Hello")
    assert refused.value.translation_key == "no_trusted_device"
    assert await emulator.inbox(group_id) == []


async def test_removing_the_name_removes_only_its_entity(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    await name_flow(hass, agent, group_id, "Family")
    entity_id = notify_of(hass, agent, group_id)
    assert entity_id is not None
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    client = agent.runtime.agent
    book, keys = agent.runtime.trust.book, set(client.data.conversations.group_keys)

    subentry = the_subentry(agent, group_id)
    assert hass.config_entries.async_remove_subentry(agent.entry, subentry.subentry_id)
    await hass.async_block_till_done()
    assert notify_of(hass, agent, group_id) is None
    assert hass.states.get(entity_id) is None
    # The agent's trust decisions and group keys stay; its sessions too: the owner's notify
    # still reaches the owner's phone.
    assert agent.runtime.trust.book == book
    assert set(client.data.conversations.group_keys) == keys
    await notify(hass, "notify.home", "Still here")
    (direct,) = await received(emulator, agent, 1)
    assert direct["text"] == "Still here"

    # Named again: offered again, the same entity id, and it reaches the group.
    assert offered(await start_naming(hass, agent)) == [group_id]
    await name_flow(hass, agent, group_id, "Family")
    assert notify_of(hass, agent, group_id) == entity_id
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    await notify(hass, entity_id, "Back")
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {e["text"] for e in entries} == {"Back"}


async def test_an_unknown_conversation_id_aborts_with_a_translated_reason(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    named_from_the_start = dict(agent.entry.subentries)  # the owner's direct conversation
    # Nothing seen yet but the owner's direct conversation: nothing to name.
    nothing = await start_naming(hass, agent)
    assert (nothing["type"], nothing["reason"]) == (FlowResultType.ABORT, "no_conversations")
    assert "named already" in abort_text("no_conversations")

    group_id, _ = await family_group(emulator, agent)
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    form = await start_naming(hass, agent)
    gone = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": "conv-nobody-knows", "name": "Ghosts"}
    )
    assert (gone["type"], gone["reason"]) == (FlowResultType.ABORT, "unknown_conversation")
    # Shown as text in the abort's markdown (the "-" escaped): an id may be the relay's.
    assert gone["description_placeholders"] == {"conversation_id": "conv\\-nobody\\-knows"}
    assert "{conversation_id}" in abort_text("unknown_conversation")
    # The owner's direct conversation is not nameable twice (named with the entry).
    direct = await name_flow(hass, agent, agent.conversation_id, "Me")
    assert (direct["type"], direct["reason"]) == (FlowResultType.ABORT, "already_named")
    assert agent.entry.subentries == named_from_the_start

    # Two tabs show the form; the second submits after the first named the group.
    first, second = await start_naming(hass, agent), await start_naming(hass, agent)
    for tab in (first, second):
        assert offered(tab) == [group_id]
    named = await hass.config_entries.subentries.async_configure(
        first["flow_id"], {"conversation_id": group_id, "name": "Family"}
    )
    assert named["type"] is FlowResultType.CREATE_ENTRY
    twice = await hass.config_entries.subentries.async_configure(
        second["flow_id"], {"conversation_id": group_id, "name": "Family again"}
    )
    assert (twice["type"], twice["reason"]) == (FlowResultType.ABORT, "already_named")
    assert [s.title for s in agent.entry.subentries.values()] == ["Owner", "Family"]
    assert abort_text("already_named")


async def test_a_pasted_text_that_is_no_id_gets_the_form_again_with_why(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """The bound of a pasted id is the relay's (the client's `is_relay_id`), not a name's:
    no id at all is refused on the form, translated; a long unknown id is named whole."""
    agent = await start_agent(hass, emulator)
    named_from_the_start = dict(agent.entry.subentries)  # the owner's direct conversation
    group_id, _ = await family_group(emulator, agent)
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    for pasted in ("c" * 300, "conv\n1", group_id + "\x00"):
        form = await start_naming(hass, agent)
        refused = await hass.config_entries.subentries.async_configure(
            form["flow_id"], {"conversation_id": pasted, "name": "Family"}
        )
        assert refused["errors"] == {"conversation_id": "invalid_conversation_id"}, pasted
        assert offered(refused) == [group_id]  # the form again, nothing named
    assert agent.entry.subentries == named_from_the_start
    for path in (STRINGS, STRINGS.parent / "translations" / "en.json"):
        errors = json.loads(path.read_text())["config_subentries"][SUBENTRY_CONVERSATION]
        assert "not a conversation id" in errors["error"]["invalid_conversation_id"]

    long_unknown = "conv-" + "x" * 195  # an id (up to 256 characters), of no conversation
    form = await start_naming(hass, agent)
    gone = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": long_unknown, "name": "Ghosts"}
    )
    assert (gone["type"], gone["reason"]) == (FlowResultType.ABORT, "unknown_conversation")
    assert gone["description_placeholders"] == {"conversation_id": markdown_text(long_unknown)}
    named = await name_flow(hass, agent, group_id, "Family")
    assert named["type"] is FlowResultType.CREATE_ENTRY


async def test_naming_needs_a_running_agent(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    named_from_the_start = dict(agent.entry.subentries)
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    stopped = await start_naming(hass, agent)
    assert (stopped["type"], stopped["reason"]) == (FlowResultType.ABORT, "agent_not_loaded")
    assert "not running" in abort_text("agent_not_loaded")
    assert agent.entry.subentries == named_from_the_start
