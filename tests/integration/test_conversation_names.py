"""A subentry holds only its conversation id; the agent's store keeps whom it reaches.

A subentry from before held the recipient too: handed to the store once, at setup, then
removed from the subentry; a recipient that cannot reach that conversation is not kept. The
named group's notify reaches the group from the store's record, after a reload too, and a
removed subentry is forgotten by the store.
"""

from types import MappingProxyType

from homeassistant.components.notify import ATTR_MESSAGE, SERVICE_SEND_MESSAGE
from homeassistant.components.notify import DOMAIN as NOTIFY_DOMAIN
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client import ConnectionState
from custom_components.pacerelle.const import SUBENTRY_CONVERSATION
from tests.helpers.agent import start_agent
from tests.helpers.conversations import kept_recipient, notify_of, the_subentry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import DEVICES, family_group, member_writes
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes, refused


def legacy(conversation_id: str, recipient: str, title: str) -> ConfigSubentry:
    """A subentry as named before the store kept recipients."""
    return ConfigSubentry(
        data=MappingProxyType({"conversation_id": conversation_id, "recipient": recipient}),
        subentry_type=SUBENTRY_CONVERSATION,
        title=title,
        unique_id=conversation_id,
    )


async def test_a_subentry_from_before_hands_its_recipient_to_the_store_once(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")  # the owner's phone, trusted on first use
    await member_writes(emulator, agent, group_id, text="hi", user_id=members[1])
    entry = agent.entry
    assert await hass.config_entries.async_unload(entry.entry_id)
    hass.config_entries.async_add_subentry(entry, legacy(group_id, f"group:{group_id}", "Family"))
    # Another conversation's group as the recipient: never kept (nor sent to).
    hass.config_entries.async_add_subentry(entry, legacy("conv_forged", "group:other", "Forged"))

    assert await hass.config_entries.async_setup(entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    assert dict(the_subentry(agent, group_id).data) == {"conversation_id": group_id}
    assert dict(the_subentry(agent, "conv_forged").data) == {"conversation_id": "conv_forged"}
    assert await kept_recipient(agent, group_id) == f"group:{group_id}"
    assert dict(agent.runtime.agent.data.conversations.named) == {group_id: f"group:{group_id}"}

    entity_id = notify_of(hass, agent, group_id)
    assert entity_id == "notify.family"
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    data = {ATTR_ENTITY_ID: entity_id, ATTR_MESSAGE: "Dinner"}
    await hass.services.async_call(NOTIFY_DOMAIN, SERVICE_SEND_MESSAGE, data, blocking=True)
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert {(e["text"], e["to"]) for e in entries} == {("Dinner", f"group:{group_id}")}

    # Reloaded, the subentry holding nothing but the id: the store still says whom it reaches.
    assert await hass.config_entries.async_reload(entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    assert agent.runtime.agent.recipient(conversation_id=group_id).is_group
    await hass.services.async_call(NOTIFY_DOMAIN, SERVICE_SEND_MESSAGE, data, blocking=True)
    await emulator.wait_inbox(group_id, 2 * len(members) * len(DEVICES))


async def test_a_removed_subentry_is_forgotten_by_the_store(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, group_id, text="hi", user_id=members[1])
    hass.config_entries.async_add_subentry(
        agent.entry,
        ConfigSubentry(
            data=MappingProxyType({"conversation_id": group_id}),
            subentry_type=SUBENTRY_CONVERSATION,
            title="Family",
            unique_id=group_id,
        ),
    )
    assert await kept_recipient(agent, group_id) == f"group:{group_id}"
    subentry = the_subentry(agent, group_id)
    assert hass.config_entries.async_remove_subentry(agent.entry, subentry.subentry_id)
    await wait_until(lambda: group_id not in agent.runtime.agent.data.conversations.named)


async def test_a_send_to_a_conversation_the_agent_does_not_know_is_refused_translated(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Not its own, not named, never written in: the agent knows nobody it would reach
    there, so nothing is sent (not a direct message to the owner in a stranger's
    conversation, as a send without `to` went before)."""
    agent = await start_agent(hass, emulator, spoken=True)
    before = agent.runtime.agent.history().replies
    error = await refused(
        hass,
        "send_message",
        {"text": "hi", "conversation_id": "conv_nobody"},
        "unknown_conversation",
    )
    assert "conv_nobody" in error.translation_placeholders["detail"]
    assert agent.runtime.agent.history().replies == before  # nothing sent, nothing recorded
