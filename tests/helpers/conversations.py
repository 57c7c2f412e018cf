"""Naming a conversation as the frontend does ("Add conversation"), and finding what it got."""

import json
from pathlib import Path
from typing import Any

from homeassistant.components.notify import DOMAIN as NOTIFY_DOMAIN
from homeassistant.config_entries import SOURCE_USER, ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er

import custom_components.pacerelle
from custom_components.pacerelle.const import DOMAIN, SUBENTRY_CONVERSATION
from tests.helpers.agent import Agent
from tests.helpers.runtime import wait_until

STRINGS = Path(custom_components.pacerelle.__file__).parent / "strings.json"


def strings() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(STRINGS.read_text(encoding="utf-8"))
    return loaded


async def start_naming(hass: HomeAssistant, agent: Agent) -> Any:
    """ "Add conversation" opened: its first form."""
    return await hass.config_entries.subentries.async_init(
        (agent.entry.entry_id, SUBENTRY_CONVERSATION), context={"source": SOURCE_USER}
    )


async def name_flow(hass: HomeAssistant, agent: Agent, conversation_id: str, title: str) -> Any:
    """ "Add conversation" filled in with the id and the name; the flow's result, unchecked."""
    form = await start_naming(hass, agent)
    return await hass.config_entries.subentries.async_configure(
        form["flow_id"], {"conversation_id": conversation_id, "name": title}
    )


def the_subentry(agent: Agent, conversation_id: str) -> ConfigSubentry:
    """The one subentry that names the conversation (there must be exactly one)."""
    (found,) = [
        s for s in agent.entry.subentries.values() if s.data["conversation_id"] == conversation_id
    ]
    return found


async def kept_recipient(agent: Agent, conversation_id: str) -> str:
    """The recipient the agent's store keeps for a named conversation, once it was told
    (conversation_names.py tells it in the background)."""
    await wait_until(lambda: conversation_id in agent.runtime.agent.data.conversations.named)
    return agent.runtime.agent.data.conversations.named[conversation_id]


def subentry_of(agent: Agent, conversation_id: str) -> ConfigSubentry | None:
    found = [
        s for s in agent.entry.subentries.values() if s.data["conversation_id"] == conversation_id
    ]
    return found[0] if found else None


def notify_of(hass: HomeAssistant, agent: Agent, conversation_id: str) -> str | None:
    """The notify entity of a named conversation (None while it has none)."""
    unique_id = f"{agent.entry.entry_id}_conversation_{conversation_id}"
    return er.async_get(hass).async_get_entity_id(NOTIFY_DOMAIN, DOMAIN, unique_id)


async def name_conversation(
    hass: HomeAssistant, agent: Agent, conversation_id: str, title: str
) -> str:
    """Name it through "Add conversation"; its notify entity, once its state is written."""
    done = await name_flow(hass, agent, conversation_id, title)
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    await wait_until(lambda: notify_of(hass, agent, conversation_id) is not None)
    entity_id = notify_of(hass, agent, conversation_id)
    assert entity_id is not None
    await wait_until(lambda: hass.states.get(entity_id) is not None)
    return entity_id
