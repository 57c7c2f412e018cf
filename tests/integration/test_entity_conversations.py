"""A named conversation's own device and entities, against the emulator: the family group
of three and a second group are named through the subentry flow; each gets a device
(linked to the agent's) with its notify, event and members entities and device triggers,
which fire for its own messages only; a group the agent is taken out of shows its entities
unavailable until it is back; removing the name removes only its device and entities.
The owner's direct conversation, named, gets the same but for a notify entity (notify.home
is its), and its event entity fires for direct messages only."""

from typing import Any

from homeassistant.components.device_automation import (
    DeviceAutomationType,
    async_get_device_automations,
)
from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    async_capture_events,
    async_fire_time_changed,
)

from custom_components.pacerelle.client import ConnectionState, TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.group_membership import GROUP_CHECK_INTERVAL
from tests.helpers.conversations import name_flow, the_subentry
from tests.helpers.device_triggers import FIRED, automate, on_trigger
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import member_writes
from tests.helpers.readme import README
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes
from tests.integration.named_conversations import (
    FAMILY,
    KITCHEN,
    OWNER_ENTITIES,
    name_owners_conversation,
    two_named_groups,
)

ANA, BEN = "usr_ana", "usr_ben"


async def next_check(hass: HomeAssistant, intervals: int = 1) -> None:
    """The time of the next membership check, once the checks before it are done (the
    fired time runs every timer due by then, theirs too)."""
    await hass.async_block_till_done(wait_background_tasks=True)
    async_fire_time_changed(hass, dt_util.utcnow() + intervals * GROUP_CHECK_INTERVAL)


def shown(changes: list[Event[Any]], entity_id: str) -> list[str | None]:
    """The message ids an event entity showed, in order."""
    return [
        e.data["new_state"].attributes.get("message_id")
        for e in changes
        if e.data["entity_id"] == entity_id
        and e.data["new_state"] is not None
        and e.data["new_state"].state not in (STATE_UNAVAILABLE, STATE_UNKNOWN)
    ]


async def test_a_named_group_has_its_own_device_beside_the_agents(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    entities, devices = er.async_get(hass), dr.async_get(hass)
    subentry = the_subentry(agent, agent.groups["Family"])
    (device_id,) = {entities.async_get(e).device_id for e in FAMILY}  # type: ignore[union-attr]
    assert device_id is not None
    device = devices.async_get(device_id)
    assert device is not None
    assert (device.name, device.via_device_id) == ("Family", agent.device_id(hass))
    assert device.config_subentry_id == subentry.subentry_id
    for entity_id in FAMILY:
        entity = entities.async_get(entity_id)
        assert entity is not None
        assert entity.config_subentry_id == subentry.subentry_id
    # The agent's device and its entities stay the entry's own.
    home = devices.async_get(agent.device_id(hass))
    assert home is not None
    assert home.config_subentry_id is None
    for entity_id in ("notify.home", "event.home_messages", "sensor.home_connection"):
        entity = entities.async_get(entity_id)
        assert entity is not None
        assert (entity.device_id, entity.config_subentry_id) == (home.id, None)
    assert hass.states.get("notify.family").name == "Family"  # type: ignore[union-attr]

    # After a reload (the agent's device registered again, older devices cleaned up),
    # both devices stay: neither is removed, not even to be made again.
    updates = async_capture_events(hass, dr.EVENT_DEVICE_REGISTRY_UPDATED)
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    assert [e.data for e in updates if e.data["action"] == "remove"] == []
    assert devices.async_get(device_id) is not None
    assert entities.async_get("notify.family").device_id == device_id  # type: ignore[union-attr]


async def test_the_event_entity_fires_for_its_conversation_only(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    changes = async_capture_events(hass, "state_changed")
    direct = await human_writes(emulator, agent, text="just me")
    kitchen = await member_writes(emulator, agent, agent.groups["Kitchen"], text="k", user_id=ANA)
    family = await member_writes(emulator, agent, agent.groups["Family"], text="f", user_id=BEN)
    await wait_until(lambda: family["message_id"] in shown(changes, "event.family_messages"))
    await wait_until(lambda: family["message_id"] in shown(changes, "event.home_messages"))
    assert shown(changes, "event.family_messages") == [family["message_id"]]
    assert shown(changes, "event.kitchen_messages") == [kitchen["message_id"]]
    # The agent's own entity keeps firing for every message, as before.
    assert shown(changes, "event.home_messages") == [
        direct["message_id"],
        kitchen["message_id"],
        family["message_id"],
    ]
    state = hass.states.get("event.family_messages")
    assert state is not None
    assert state.attributes["event_type"] == "message"
    assert state.attributes["message_id"] == family["message_id"]
    assert state.attributes["sender_id"] == BEN


async def test_device_triggers_fire_for_their_conversation_only(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    await name_owners_conversation(hass, agent)
    entities = er.async_get(hass)
    family_device = entities.async_get("notify.family").device_id  # type: ignore[union-attr]
    owner_device = entities.async_get("event.owner_messages").device_id  # type: ignore[union-attr]
    assert family_device is not None
    found = await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, [family_device])
    ours = sorted(t["type"] for t in found[family_device] if t["domain"] == DOMAIN)
    assert ours == ["message_received", "widget_answered"]
    fired = async_capture_events(hass, FIRED)
    await automate(
        hass,
        (
            on_trigger(
                device_id,
                "message_received",
                {"device": label, "message_id": "{{ trigger.event.data.message_id }}"},
            )
            for label, device_id in (
                ("family", family_device),
                ("owner", owner_device),
                ("home", agent.device_id(hass)),
            )
        ),
    )
    direct = await human_writes(emulator, agent, text="just me")
    kitchen = await member_writes(emulator, agent, agent.groups["Kitchen"], text="k", user_id=ANA)
    family = await member_writes(emulator, agent, agent.groups["Family"], text="f", user_id=ANA)
    await wait_until(lambda: len(fired) == 5)
    await hass.async_block_till_done()
    by_device: dict[str, list[str]] = {}
    for event in fired:
        by_device.setdefault(event.data["device"], []).append(event.data["message_id"])
    # Each conversation's device for its own messages only; the agent's for all of them.
    assert by_device == {
        "family": [family["message_id"]],
        "owner": [direct["message_id"]],
        "home": [direct["message_id"], kitchen["message_id"], family["message_id"]],
    }


async def test_the_members_sensor_shows_the_members_and_their_devices_trust(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    owner = agent.installed.owner_id
    await member_writes(emulator, agent, agent.groups["Family"], text="me too", user_id=ANA)

    def members() -> dict[str, dict[str, str]]:
        state = hass.states.get("sensor.family_members")
        assert state is not None
        return {m["id"]: m["devices"] for m in state.attributes["members"]}

    state = hass.states.get("sensor.family_members")
    assert state is not None
    assert state.state == "3"
    assert sorted(members()) == sorted([owner, ANA, BEN])
    # As the trust repair shows them: the owner's phone trusted on first use, Ana's
    # unverified (she wrote from it), Ben's none seen yet.
    assert members()[owner]["1"] == "trusted"
    assert members()[ANA]["1"] == "unverified"
    kitchen = hass.states.get("sensor.kitchen_members")
    assert kitchen is not None
    assert kitchen.state == "2"

    device = agent.runtime.trust.book.get(ANA, "1")
    assert device is not None
    await agent.runtime.trust.async_decide(ANA, "1", TrustState.TRUSTED, key=device.identity_key)
    await wait_until(lambda: members()[ANA]["1"] == "trusted")


async def test_a_group_the_agent_left_shows_unavailable_until_it_is_back(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    family = agent.groups["Family"]
    client = agent.runtime.agent
    keys, book = set(client.data.conversations.group_keys), agent.runtime.trust.book
    path = f"/groups/{family}/agents"
    await emulator.admin("POST", path, {"remove": [agent.installed.agent_id]})

    # The relay tells nothing: the next check asks it for the group's keys and is refused.
    await next_check(hass)
    await wait_until(
        lambda: all(hass.states.get(e).state == STATE_UNAVAILABLE for e in FAMILY)  # type: ignore[union-attr]
    )
    assert client.has_left(family)
    # Not deleted: still in the registry, the other group's entities untouched, nothing of
    # the agent's keys or trust changed.
    entities = er.async_get(hass)
    assert all(entities.async_get(e) is not None for e in FAMILY)
    assert all(hass.states.get(e).state != STATE_UNAVAILABLE for e in KITCHEN)  # type: ignore[union-attr]
    assert set(client.data.conversations.group_keys) >= keys
    assert agent.runtime.trust.book == book
    # A reload does not bring it back: the check at connect finds it left again.
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.agent.has_left(family))
    await wait_until(
        lambda: all(hass.states.get(e).state == STATE_UNAVAILABLE for e in FAMILY)  # type: ignore[union-attr]
    )

    # Put back: the first message of the group brings its entities back.
    await emulator.admin("POST", path, {"add": [agent.installed.agent_id]})
    back = await member_writes(emulator, agent, family, text="welcome back", user_id=ANA)
    await wait_until(
        lambda: all(hass.states.get(e).state != STATE_UNAVAILABLE for e in FAMILY)  # type: ignore[union-attr]
    )
    state = hass.states.get("event.family_messages")
    assert state is not None
    assert state.attributes["message_id"] == back["message_id"]
    assert not agent.runtime.agent.has_left(family)


def test_the_readme_says_how_often_the_agent_asks() -> None:
    minutes = int(GROUP_CHECK_INTERVAL.total_seconds() // 60)
    assert f"every {minutes} minutes" in README.read_text()


async def test_a_group_put_back_is_found_by_the_next_check(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    family = agent.groups["Family"]
    path = f"/groups/{family}/agents"
    await emulator.admin("POST", path, {"remove": [agent.installed.agent_id]})
    await next_check(hass)
    await wait_until(lambda: agent.runtime.agent.has_left(family))
    await emulator.admin("POST", path, {"add": [agent.installed.agent_id]})
    await next_check(hass, 2)
    await wait_until(lambda: not agent.runtime.agent.has_left(family))
    await wait_until(
        lambda: all(hass.states.get(e).state != STATE_UNAVAILABLE for e in FAMILY)  # type: ignore[union-attr]
    )


async def test_removing_the_name_removes_its_device_and_naming_again_keeps_ids(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    family = agent.groups["Family"]
    entities, devices = er.async_get(hass), dr.async_get(hass)
    device_id = entities.async_get("notify.family").device_id  # type: ignore[union-attr]
    unique_ids = [entities.async_get(e).unique_id for e in FAMILY]  # type: ignore[union-attr]
    client = agent.runtime.agent
    keys, book = set(client.data.conversations.group_keys), agent.runtime.trust.book
    home = [e.entity_id for e in er.async_entries_for_device(entities, agent.device_id(hass))]

    subentry = the_subentry(agent, family)
    assert hass.config_entries.async_remove_subentry(agent.entry, subentry.subentry_id)
    await hass.async_block_till_done()
    assert devices.async_get(device_id) is None  # type: ignore[arg-type]
    assert all(entities.async_get(e) is None and hass.states.get(e) is None for e in FAMILY)
    # The agent's device, its entities and the other group stay; no key or trust goes.
    assert [
        e.entity_id for e in er.async_entries_for_device(entities, agent.device_id(hass))
    ] == home
    assert all(entities.async_get(e) is not None for e in KITCHEN)
    assert set(client.data.conversations.group_keys) == keys
    assert agent.runtime.trust.book == book

    await name_flow(hass, agent, family, "Family")
    await wait_until(lambda: all(hass.states.get(e) for e in FAMILY))
    assert [entities.async_get(e).unique_id for e in FAMILY] == unique_ids  # type: ignore[union-attr]
    again = entities.async_get("notify.family").device_id  # type: ignore[union-attr]
    # The same device too (the registry restores a deleted device with its identifiers):
    # device triggers and dashboards that used it keep working.
    assert again == device_id
    assert devices.async_get(again).name == "Family"  # type: ignore[arg-type,union-attr]


async def test_an_entity_of_the_first_slice_gets_the_device_and_keeps_its_id(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    entities, devices = er.async_get(hass), dr.async_get(hass)
    entity = entities.async_get("notify.family")
    assert entity is not None
    # As the first slice left it: the notify entity of the subentry, with no device.
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    device_id = entity.device_id
    assert device_id is not None
    entities.async_update_entity("notify.family", device_id=None)
    devices.async_remove_device(device_id)
    await hass.async_block_till_done()
    before = entities.async_get("notify.family")
    assert before is not None
    assert before.device_id is None
    assert await hass.config_entries.async_setup(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    after = entities.async_get("notify.family")
    assert after is not None
    assert (after.entity_id, after.unique_id, after.config_subentry_id) == (
        before.entity_id,
        before.unique_id,
        before.config_subentry_id,
    )
    assert after.device_id is not None
    assert devices.async_get(after.device_id).name == "Family"  # type: ignore[union-attr]


async def test_the_owners_named_conversation_fires_for_direct_messages_only(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    owner = agent.installed.owner_id
    subentry = await name_owners_conversation(hass, agent)
    entities = er.async_get(hass)
    device_id = entities.async_get("event.owner_messages").device_id  # type: ignore[union-attr]
    assert device_id not in (None, agent.device_id(hass))
    # Its notify is notify.home, which stays the entry's on the agent's device.
    on_device = er.async_entries_for_device(entities, device_id)  # type: ignore[arg-type]
    assert sorted(e.entity_id for e in on_device) == sorted(OWNER_ENTITIES)
    home = entities.async_get("notify.home")
    assert home is not None
    assert (home.device_id, home.config_subentry_id) == (agent.device_id(hass), None)
    assert hass.states.get("sensor.owner_members").state == "1"  # type: ignore[union-attr]

    changes = async_capture_events(hass, "state_changed")
    family = await member_writes(emulator, agent, agent.groups["Family"], text="f", user_id=owner)
    direct = await human_writes(emulator, agent, text="just me")
    await wait_until(lambda: direct["message_id"] in shown(changes, "event.owner_messages"))
    assert shown(changes, "event.owner_messages") == [direct["message_id"]]
    assert family["message_id"] in shown(changes, "event.family_messages")
    assert direct["message_id"] not in shown(changes, "event.family_messages")

    # Removing it removes its device only: notify.home and the agent's device stay.
    assert hass.config_entries.async_remove_subentry(agent.entry, subentry.subentry_id)
    await hass.async_block_till_done()
    assert dr.async_get(hass).async_get(device_id) is None  # type: ignore[arg-type]
    assert all(entities.async_get(e) is None for e in OWNER_ENTITIES)
    assert entities.async_get("notify.home") is not None
    assert hass.states.get("notify.home") is not None
