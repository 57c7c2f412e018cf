"""A named conversation's device, against the emulator: renamed as the frontend renames a
subentry, its device's name follows at once (entity ids stay, friendly names follow, a
name the user gave the device or an entity wins, the agent's connection stays); the trust
and block device actions live on the agent's device only, and one saved with a
conversation's device decides nothing."""

from typing import Any

import pytest
from homeassistant.components.device_automation import (
    DeviceAutomationType,
    async_get_device_automations,
)
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.pacerelle.client import ConnectionState, TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.device_action import async_call_action_from_config
from custom_components.pacerelle.limits import MAX_CONVERSATION_NAME_CHARS
from custom_components.pacerelle.signals import status_signal
from tests.helpers.agent import Agent
from tests.helpers.conversations import the_subentry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ANA, member_writes
from tests.helpers.runtime import wait_until
from tests.integration.named_conversations import (
    FAMILY,
    KITCHEN,
    OWNER_ENTITIES,
    name_owners_conversation,
    two_named_groups,
)


def family_device(hass: HomeAssistant) -> dr.DeviceEntry:
    entity = er.async_get(hass).async_get("notify.family")
    assert entity is not None
    assert entity.device_id is not None
    device = dr.async_get(hass).async_get(entity.device_id)
    assert device is not None
    return device


async def rename(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator, agent: Agent, title: str
) -> None:
    """Rename the family's subentry as the frontend does (its websocket command)."""
    assert await async_setup_component(hass, "config", {})
    client = await hass_ws_client(hass)
    subentry = the_subentry(agent, agent.groups["Family"])
    await client.send_json_auto_id(
        {
            "type": "config_entries/subentries/update",
            "entry_id": agent.entry.entry_id,
            "subentry_id": subentry.subentry_id,
            "title": title,
        }
    )
    assert (await client.receive_json())["success"]


def friendly_names(hass: HomeAssistant, entity_ids: tuple[str, ...]) -> list[str]:
    names = []
    for entity_id in entity_ids:
        state = hass.states.get(entity_id)
        assert state is not None
        names.append(state.name)
    return names


async def test_renaming_a_conversation_renames_its_device_and_keeps_entity_ids(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    agent = await two_named_groups(hass, emulator)
    entities = er.async_get(hass)
    device = family_device(hass)
    unique_ids = [entities.async_get(e).unique_id for e in FAMILY]  # type: ignore[union-attr]
    # An entity the user named keeps that name.
    entities.async_update_entity("sensor.family_members", name="Who is in")
    await wait_until(lambda: friendly_names(hass, ("sensor.family_members",)) == ["Who is in"])
    before = friendly_names(hass, FAMILY[:2])
    assert before[0] == "Family"
    assert before[1].startswith("Family ")
    kitchen = friendly_names(hass, KITCHEN)
    home = dr.async_get(hass).async_get(agent.device_id(hass))
    runtime, connection = agent.entry.runtime_data, emulator.emulator.hub.connections
    socket = connection[agent.installed.agent_id]
    states: list[ConnectionState] = []
    agent.entry.async_on_unload(
        async_dispatcher_connect(
            hass, status_signal(agent.entry.entry_id), lambda: states.append(runtime.status.state)
        )
    )

    await rename(hass, hass_ws_client, agent, "Familia")
    await wait_until(lambda: family_device(hass).name == "Familia")
    await wait_until(lambda: friendly_names(hass, FAMILY[:1]) == ["Familia"])
    await hass.async_block_till_done()
    assert family_device(hass).id == device.id
    assert [entities.async_get(e).unique_id for e in FAMILY] == unique_ids  # type: ignore[union-attr]
    assert friendly_names(hass, FAMILY) == [
        "Familia",
        before[1].replace("Family", "Familia", 1),
        "Who is in",
    ]
    # Only that device: the other conversation's and the agent's stay as they were.
    assert friendly_names(hass, KITCHEN) == kitchen
    assert dr.async_get(hass).async_get(agent.device_id(hass)) == home
    # No reload: the same runtime, the same socket to the relay, never disconnected.
    assert agent.entry.state is ConfigEntryState.LOADED
    assert agent.entry.runtime_data is runtime
    assert connection[agent.installed.agent_id] is socket
    assert set(states) <= {ConnectionState.CONNECTED}
    assert runtime.status.state is ConnectionState.CONNECTED

    # Set up again, it keeps the new name (its entities' device is named after the title).
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    assert family_device(hass).name == "Familia"
    assert friendly_names(hass, FAMILY[:1]) == ["Familia"]


async def test_a_name_the_user_gave_the_device_wins_over_the_conversations(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    agent = await two_named_groups(hass, emulator)
    device = family_device(hass)
    dr.async_get(hass).async_update_device(device.id, name_by_user="Our lot")
    await wait_until(lambda: friendly_names(hass, FAMILY[:1]) == ["Our lot"])

    await rename(hass, hass_ws_client, agent, "Familia")
    await wait_until(lambda: family_device(hass).name == "Familia")
    await hass.async_block_till_done()
    assert family_device(hass).name_by_user == "Our lot"
    assert friendly_names(hass, FAMILY[:1]) == ["Our lot"]
    assert hass.states.get("notify.family") is not None

    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    assert (family_device(hass).name, family_device(hass).name_by_user) == ("Familia", "Our lot")


async def test_a_blank_or_overlong_rename_shows_a_bounded_name(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    """Home Assistant's rename stores the title as typed: the device shows it trimmed and cut
    to what "Add conversation" accepts, a blank one as "Conversation"."""
    agent = await two_named_groups(hass, emulator)
    await rename(hass, hass_ws_client, agent, "   ")
    await wait_until(lambda: family_device(hass).name == "Conversation")
    await rename(hass, hass_ws_client, agent, "  " + "F" * 300)
    await wait_until(lambda: family_device(hass).name == "F" * MAX_CONVERSATION_NAME_CHARS)
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    assert family_device(hass).name == "F" * MAX_CONVERSATION_NAME_CHARS
    assert hass.states.get("notify.family") is not None


async def test_the_owners_conversation_renamed_while_not_loaded_is_named_at_its_start(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await two_named_groups(hass, emulator)
    subentry = await name_owners_conversation(hass, agent)
    entities = er.async_get(hass)
    device_id = entities.async_get("event.owner_messages").device_id  # type: ignore[union-attr]
    assert device_id is not None
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    await hass.async_block_till_done()
    assert hass.config_entries.async_update_subentry(agent.entry, subentry, title="Moi")
    assert await hass.config_entries.async_setup(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    device = dr.async_get(hass).async_get(device_id)
    assert device is not None
    assert device.name == "Moi"
    assert all(hass.states.get(e) is not None for e in OWNER_ENTITIES)
    assert friendly_names(hass, OWNER_ENTITIES)[0].startswith("Moi ")
    # The agent's device and notify.home keep the agent's name.
    assert friendly_names(hass, ("notify.home",)) == ["Home"]


async def ours(hass: HomeAssistant, kind: DeviceAutomationType, device_id: str) -> list[str]:
    found: dict[str, list[dict[str, Any]]] = await async_get_device_automations(
        hass, kind, [device_id]
    )
    return sorted(a["type"] for a in found[device_id] if a["domain"] == DOMAIN)


async def test_trust_and_block_are_the_agents_device_actions_only(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """A conversation's device offers sending a message into it, never a trust decision."""
    agent = await two_named_groups(hass, emulator)
    conversation = family_device(hass).id
    actions = DeviceAutomationType.ACTION
    assert await ours(hass, actions, agent.device_id(hass)) == [
        "block_device",
        "send_message",
        "trust_device",
    ]
    assert await ours(hass, actions, conversation) == ["send_message"]
    # Its triggers are still offered: they fire for that conversation's messages.
    assert await ours(hass, DeviceAutomationType.TRIGGER, conversation) == [
        "message_received",
        "widget_answered",
    ]

    # Ana wrote in the family group: her device waits for a decision.
    await member_writes(emulator, agent, agent.groups["Family"], text="me too", user_id=ANA)
    book = agent.runtime.trust.book
    await wait_until(lambda: book.get(ANA, "1") is not None)
    ana = book.get(ANA, "1")
    assert ana is not None
    assert ana.state is not TrustState.TRUSTED
    for action_type in ("trust_device", "block_device"):
        with pytest.raises(ServiceValidationError, match="Nothing was decided") as refused:
            await async_call_action_from_config(
                hass,
                {
                    "domain": DOMAIN,
                    "device_id": conversation,
                    "type": action_type,
                    "sender_device_id": "1",
                    "person_id": ANA,
                    "verification_code": ana.code,
                },
                {},
                Context(),
            )
        assert refused.value.translation_key == "not_agent_device"
        assert agent.runtime.trust.book.get(ANA, "1") == ana

    # The same action on the agent's device decides.
    await async_call_action_from_config(
        hass,
        {
            "domain": DOMAIN,
            "device_id": agent.device_id(hass),
            "type": "trust_device",
            "sender_device_id": "1",
            "person_id": ANA,
            "verification_code": ana.code,
        },
        {},
        Context(),
    )
    assert agent.runtime.trust.book.get(ANA, "1").state is TrustState.TRUSTED  # type: ignore[union-attr]
