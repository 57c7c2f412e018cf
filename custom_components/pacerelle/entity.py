"""What every Pacerelle entity shares: its agent's device and the status signal.

One device per agent (device.py); unique ids are the config entry id and the entity's key, so
a reauth (a new agent id) keeps every entity id. Entities never poll: they write their state
again from `runtime.status` at each `status_signal(entry_id)`.
A named conversation's entities (`ConversationEntity`) are on the conversation's device,
keyed on the conversation, so naming it again gives back the same entity ids. They are
available while the agent is and is in it: a group left (`Agent.has_left`) shows unavailable.
`async_add_named` adds them per subentry, at once while the agent runs. The owner's direct
conversation gets no notify entity: notify.<agent> is its notify and stays the entry's.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import override

from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
    ConfigSubentry,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity import Entity, EntityDescription
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .client import AgentStatus, ConnectionState
from .const import CONF_CONVERSATION_ID, SUBENTRY_CONVERSATION
from .device import agent_name, conversation_device_info, conversation_name, device_identifiers
from .owner_conversation import is_owner_subentry
from .runtime import PacerelleConfigEntry, PacerelleRuntime
from .signals import status_signal

# The notify and event entities stay available while the agent (re)connects: Home Assistant
# silently skips unavailable entities in an action, while a send now fails with an error
# that says why. A revoked or stopped agent has nothing behind them.
REACHABLE_STATES = frozenset(
    {ConnectionState.CONNECTING, ConnectionState.CONNECTED, ConnectionState.RECONNECTING}
)


def entity_unique_id(entry_id: str, key: str) -> str:
    """The unique id of an entity of the entry: it survives a new agent id."""
    return f"{entry_id}_{key}"


class PacerelleEntity(Entity):
    """An entity of one agent, refreshed by the agent's status signal."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, entry: PacerelleConfigEntry, description: EntityDescription) -> None:
        self.entity_description = description
        self.entry = entry
        self.runtime: PacerelleRuntime = entry.runtime_data
        self.agent_name = agent_name(entry)
        self._attr_unique_id = entity_unique_id(entry.entry_id, description.key)
        self._attr_device_info = DeviceInfo(identifiers=device_identifiers(entry.entry_id))

    @property
    def status(self) -> AgentStatus:
        return self.runtime.status

    @override
    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        self.async_on_remove(
            async_dispatcher_connect(
                self.hass, status_signal(self.runtime.entry_id), self._handle_status
            )
        )

    @callback
    def _handle_status(self) -> None:
        self.async_write_ha_state()


@dataclass(frozen=True, slots=True)
class NamedConversation:
    """A `conversation` subentry: the conversation and its name (whom a send to it reaches
    is the client's to say: `Agent.recipient`)."""

    subentry_id: str
    conversation_id: str
    title: str
    owner: bool  # the owner's direct conversation (the entry's conversation id)

    @classmethod
    def of(cls, entry: ConfigEntry, subentry: ConfigSubentry) -> NamedConversation:
        data = subentry.data
        conversation_id = str(data[CONF_CONVERSATION_ID])
        return cls(
            subentry.subentry_id,
            conversation_id,
            conversation_name(subentry.title),
            is_owner_subentry(entry, subentry),
        )

    def key(self, name: str | None = None) -> str:
        """An entity's key: `conversation_<id>` (its notify entity), `..._<name>` (others)."""
        key = f"conversation_{self.conversation_id}"
        return f"{key}_{name}" if name else key


def named_conversations(entry: ConfigEntry) -> list[NamedConversation]:
    return [
        NamedConversation.of(entry, subentry)
        for subentry in entry.subentries.values()
        if subentry.subentry_type == SUBENTRY_CONVERSATION
    ]


class ConversationEntity(PacerelleEntity):
    """An entity of one named conversation, on its device; unavailable once left."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: PacerelleConfigEntry,
        conversation: NamedConversation,
        description: EntityDescription,
    ) -> None:
        super().__init__(entry, description)
        self.conversation = conversation
        self.conversation_id = conversation.conversation_id
        self._attr_device_info = conversation_device_info(
            hass, entry.entry_id, conversation.conversation_id, conversation.title
        )

    @property
    @override
    def available(self) -> bool:
        return self.status.state in REACHABLE_STATES and not self.runtime.agent.has_left(
            self.conversation_id
        )


@callback
def async_add_named(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    build: Callable[[NamedConversation], Iterable[Entity]],
) -> None:
    """Add `build`'s entities of each named conversation with its subentry's id, now and
    whenever one is named while the entry is loaded."""
    added: set[str] = set()

    def add_named() -> None:
        for conversation in named_conversations(entry):
            if conversation.subentry_id not in added:
                added.add(conversation.subentry_id)
                async_add_entities(
                    list(build(conversation)), config_subentry_id=conversation.subentry_id
                )

    @callback
    def entry_changed(change: ConfigEntryChange, changed: ConfigEntry) -> None:
        # Not an update listener: the options flow reloads by itself (OptionsFlowWithReload
        # refuses entries that have one). A removed subentry's entities go with its device
        # and registry entries (Home Assistant removes them).
        if change is ConfigEntryChange.UPDATED and changed.entry_id == entry.entry_id:
            added.intersection_update(changed.subentries)
            add_named()

    add_named()
    entry.async_on_unload(
        async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, entry_changed)
    )
