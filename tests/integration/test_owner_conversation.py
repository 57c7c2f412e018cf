"""The owner's direct conversation is a named conversation from the start.

A new entry made through the real config flow (the frontend's flow API, the emulator as
Pacerelle) has it; a reload and a reauth keep the same subentry, which follows the new
installation's conversation; "Add conversation" never offers it while it is named; and
removing it takes nothing of the agent with it (notify.home, the sensors, the device).
"""

from types import MappingProxyType
from typing import Any

from homeassistant.components.notify import DOMAIN as NOTIFY_DOMAIN
from homeassistant.config_entries import ConfigEntry, ConfigEntryState, ConfigSubentry
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er

from custom_components.pacerelle.client import ConnectionState
from custom_components.pacerelle.const import DOMAIN, SUBENTRY_CONVERSATION
from custom_components.pacerelle.owner_conversation import async_follow_owner_conversation
from tests.helpers.agent import start_agent
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes, received

pytest_plugins = ["tests.helpers.config_flow_fixtures"]

ANA = "usr_ana"


def owner_of(entry: ConfigEntry) -> ConfigSubentry:
    (owner,) = [
        s
        for s in entry.subentries.values()
        if s.data["conversation_id"] == entry.data["conversation_id"]
    ]
    return owner


def registered(hass: HomeAssistant, entry: ConfigEntry) -> tuple[dict[str, Any], dict[str, Any]]:
    """The entry's own (not a subentry's) devices and entities: what the agent is."""
    devices = {
        d.id: (d.identifiers, d.name)
        for d in dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
        if d.config_subentry_id is None
    }
    entities = {
        e.unique_id: (e.entity_id, e.device_id)
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.config_subentry_id is None
    }
    return devices, entities


def notify_entities_of(hass: HomeAssistant, subentry_id: str) -> list[str]:
    return [
        e.entity_id
        for e in er.async_get(hass).entities.values()
        if e.config_subentry_id == subentry_id and e.domain == NOTIFY_DOMAIN
    ]


async def start_flow(hass: HomeAssistant, entry: ConfigEntry) -> Any:
    return await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_CONVERSATION), context={"source": "user"}
    )


def offered(form: Any) -> list[str]:
    assert form["type"] is FlowResultType.FORM, form
    selector = form["data_schema"].schema["conversation_id"]
    return [option["value"] for option in selector.config["options"]]


async def notify(hass: HomeAssistant, entity_id: str, message: str) -> None:
    data = {ATTR_ENTITY_ID: entity_id, "message": message}
    await hass.services.async_call(NOTIFY_DOMAIN, "send_message", data, blocking=True)


async def test_a_new_entry_names_the_owners_conversation_and_reauth_keeps_it(
    hass: HomeAssistant, notify_ready: None, driver: FlowDriver
) -> None:
    assert (await driver.install(agent_name="Home"))["type"] == "create_entry"
    await hass.async_block_till_done()
    [entry] = hass.config_entries.async_entries(DOMAIN)
    [subentry] = entry.subentries.values()
    assert (subentry.subentry_type, subentry.title) == (SUBENTRY_CONVERSATION, "Owner")
    assert subentry.unique_id == entry.data["conversation_id"]
    # Only the conversation: whom it reaches is the client's to say (the owner, here).
    assert dict(subentry.data) == {"conversation_id": entry.data["conversation_id"]}
    found = entry.runtime_data.agent.recipient(conversation_id=entry.data["conversation_id"])
    assert (found.to, found.is_group) == (entry.data["owner_id"], False)
    # notify.home is the owner's notify, the entry's, on the agent's device: no second one.
    notify_home = er.async_get(hass).async_get("notify.home")
    assert notify_home is not None
    assert notify_home.config_subentry_id is None
    device = dr.async_get(hass).async_get(str(notify_home.device_id))
    assert device is not None
    assert (device.identifiers, device.config_subentry_id) == ({(DOMAIN, entry.entry_id)}, None)
    assert notify_entities_of(hass, subentry.subentry_id) == []
    agent = registered(hass, entry)

    # The owner writes: the conversation is seen, but named already, so not offered.
    await wait_until(lambda: entry.runtime_data.status.state is ConnectionState.CONNECTED)
    await driver.emulator.send(entry.data["conversation_id"], text="hello")
    await wait_until(lambda: bool(entry.runtime_data.agent.conversations()))
    nothing = await start_flow(hass, entry)
    assert (nothing["type"], nothing["reason"]) == (FlowResultType.ABORT, "no_conversations")

    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert list(entry.subentries.values()) == [subentry]

    # Revoked, then connected again: a new agent with a new direct conversation. The
    # same subentry (same id and title) names it, and the agent's ids stay.
    old_conversation = entry.data["conversation_id"]
    await driver.emulator.admin("POST", f"/installations/{entry.data['agent_id']}/revoke")
    await wait_until(lambda: bool(hass.config_entries.flow.async_progress_by_handler(DOMAIN)))
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    key = await driver.emulator.connect_key()
    external = await driver.submit(flow["flow_id"], {"connection_key": key})
    await driver.come_back(await driver.answer(external))
    result = await driver.fetch(flow["flow_id"])
    assert (result["type"], result["reason"]) == ("abort", "reauth_successful")
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    new_conversation = entry.data["conversation_id"]
    assert new_conversation != old_conversation
    [followed] = entry.subentries.values()
    assert (followed.subentry_id, followed.title) == (subentry.subentry_id, "Owner")
    assert (followed.unique_id, followed.data["conversation_id"]) == (new_conversation,) * 2
    assert dict(followed.data) == {"conversation_id": new_conversation}
    assert (
        entry.runtime_data.agent.recipient(conversation_id=new_conversation).to
        == (entry.data["owner_id"])
    )
    assert registered(hass, entry) == agent

    await wait_until(lambda: entry.runtime_data.status.state is ConnectionState.CONNECTED)
    await driver.emulator.send(new_conversation, text="back")
    await wait_until(lambda: bool(entry.runtime_data.agent.conversations()))
    nothing = await start_flow(hass, entry)
    assert (nothing["type"], nothing["reason"]) == (FlowResultType.ABORT, "no_conversations")
    await notify(hass, "notify.home", "Welcome back")
    entries = await driver.emulator.wait_inbox(new_conversation, 1)
    assert [e["text"] for e in entries] == ["Welcome back"]


async def test_removing_the_owners_subentry_keeps_the_agent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    entry = agent.entry
    group_id, _ = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    owner = owner_of(entry)
    before = registered(hass, entry)
    assert "notify.home" in {entity_id for entity_id, _ in before[1].values()}
    # While it is named, only the group is offered.
    assert offered(await start_flow(hass, entry)) == [group_id]

    assert hass.config_entries.async_remove_subentry(entry, owner.subentry_id)
    await hass.async_block_till_done()
    # The agent's device, notify.home and the sensors are all still there and work.
    assert registered(hass, entry) == before
    assert entry.state is ConfigEntryState.LOADED
    await notify(hass, "notify.home", "Still here")
    (direct,) = await received(emulator, agent, 1)
    assert direct["text"] == "Still here"
    # A reload does not bring it back behind the user's back.
    assert await hass.config_entries.async_reload(entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    assert not entry.subentries
    assert registered(hass, entry) == before

    # Offered again, first; named again it is the owner's subentry again (the same data),
    # and its notify is still notify.home only.
    form = await start_flow(hass, entry)
    assert offered(form) == [agent.conversation_id, group_id]
    done = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": agent.conversation_id, "name": "Me"}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    again = owner_of(entry)
    assert (again.title, again.unique_id, dict(again.data)) == (
        "Me",
        owner.unique_id,
        dict(owner.data),
    )
    await hass.async_block_till_done()
    assert notify_entities_of(hass, again.subentry_id) == []
    assert registered(hass, entry) == before


async def test_a_removed_owners_conversation_is_offered_even_if_never_seen(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    assert agent.runtime.agent.conversations() == []  # the owner never wrote
    assert hass.config_entries.async_remove_subentry(agent.entry, owner_of(agent.entry).subentry_id)
    form = await start_flow(hass, agent.entry)
    assert offered(form) == [agent.conversation_id]
    (label,) = [o["label"] for o in form["data_schema"].schema["conversation_id"].config["options"]]
    assert agent.installed.owner_id in label
    done = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": agent.conversation_id, "name": "Owner"}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    assert dict(owner_of(agent.entry).data) == {"conversation_id": agent.conversation_id}
    found = agent.runtime.agent.recipient(conversation_id=agent.conversation_id)
    assert found.to == agent.installed.owner_id


async def test_a_new_direct_conversation_rekeys_only_the_owners_subentry(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """What a reauth does before the reload (config_flow.py), on the registries as the
    subentries' own entities and devices key them: on the conversation id."""
    agent = await start_agent(hass, emulator)
    entry, old = agent.entry, agent.conversation_id
    assert await hass.config_entries.async_unload(entry.entry_id)
    owner = owner_of(entry)
    group = ConfigSubentry(
        data=MappingProxyType({"conversation_id": "conv_group", "recipient": "group:conv_group"}),
        subentry_type=SUBENTRY_CONVERSATION,
        title="Family",
        unique_id="conv_group",
    )
    hass.config_entries.async_add_subentry(entry, group)
    entities, devices = er.async_get(hass), dr.async_get(hass)
    registered_ids = {}
    for subentry, conversation in ((owner, old), (group, "conv_group")):
        device = devices.async_get_or_create(
            config_entry_id=entry.entry_id,
            config_subentry_id=subentry.subentry_id,
            identifiers={(DOMAIN, f"{entry.entry_id}_{conversation}")},
        )
        entity = entities.async_get_or_create(
            "event",
            DOMAIN,
            f"{entry.entry_id}_conversation_{conversation}_messages",
            config_entry=entry,
            config_subentry_id=subentry.subentry_id,
            device_id=device.id,
        )
        registered_ids[subentry.subentry_id] = (entity.entity_id, device.id)
    agent_before = registered(hass, entry)

    async_follow_owner_conversation(hass, entry, "conv_new")
    followed = entry.subentries[owner.subentry_id]
    assert (followed.unique_id, followed.data["conversation_id"]) == ("conv_new", "conv_new")
    entity_id, device_id = registered_ids[owner.subentry_id]
    assert (
        entities.async_get_entity_id(
            "event", DOMAIN, f"{entry.entry_id}_conversation_conv_new_messages"
        )
        == entity_id
    )
    device = devices.async_get(device_id)
    assert device is not None
    assert device.identifiers == {(DOMAIN, f"{entry.entry_id}_conv_new")}
    # The group's and the agent's own are untouched.
    assert entry.subentries[group.subentry_id] == group
    entity_id, device_id = registered_ids[group.subentry_id]
    assert (
        entities.async_get_entity_id(
            "event", DOMAIN, f"{entry.entry_id}_conversation_conv_group_messages"
        )
        == entity_id
    )
    assert devices.async_get(device_id).identifiers == {  # type: ignore[union-attr]
        (DOMAIN, f"{entry.entry_id}_conv_group")
    }
    assert registered(hass, entry) == agent_before


async def test_a_new_direct_conversation_named_already_changes_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """The reauth calls this after the new store replaced the old one: it never raises."""
    agent = await start_agent(hass, emulator)
    entry = agent.entry
    assert await hass.config_entries.async_unload(entry.entry_id)
    owner = owner_of(entry)
    named = ConfigSubentry(
        data=MappingProxyType({"conversation_id": "conv_new", "recipient": "usr_demo"}),
        subentry_type=SUBENTRY_CONVERSATION,
        title="Me",
        unique_id="conv_new",
    )
    hass.config_entries.async_add_subentry(entry, named)
    before = dict(entry.subentries)
    async_follow_owner_conversation(hass, entry, "conv_new")
    assert entry.subentries == before
    assert entry.subentries[owner.subentry_id].unique_id == agent.conversation_id
