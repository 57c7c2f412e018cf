"""The notify entities of an agent: `notify.send_message` writes to the owner's conversation,
or to a named conversation (a `conversation` subentry, subentry_flow.py).

The owner's entity (notify.<agent>) is the owner's subentry's notify (owner_conversation.py)
but stays the entry's, on the agent's device, so removing that subentry never removes it;
the owner's subentry gets no second one.

The owner's message goes to the device the owner last wrote from. A title, when given,
becomes the first line. Sending needs a session, which the owner's first message opens ("the
user speaks first"): before that, the action fails with a translated error that says so. A
named conversation's entity sends exactly as `pacerelle.send_message` with its
`conversation_id` and `to` does (the same client call, so the same trust rules: a group
message is sealed only with a key a trusted session delivered). Its unique id is keyed on
the conversation, so naming it again after a removal gives back the same entity id; each
subentry added while the agent runs gets its entity at once (no reload).
"""

from typing import override

from homeassistant.components.notify import NotifyEntity, NotifyEntityDescription
from homeassistant.components.notify.const import NotifyEntityFeature
from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
    ConfigSubentry,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .actions.common import client_errors
from .const import CONF_CONVERSATION_ID, CONF_RECIPIENT, SUBENTRY_CONVERSATION
from .entity import REACHABLE_STATES, PacerelleEntity
from .owner_conversation import is_owner_subentry
from .runtime import PacerelleConfigEntry

# One message at a time per agent: the sender serialises anyway, and order matters.
PARALLEL_UPDATES = 1

OWNER = NotifyEntityDescription(key="owner", translation_key="owner")


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([PacerelleNotify(entry, OWNER)])
    added: set[str] = set()

    def add_named() -> None:
        for subentry_id, subentry in entry.subentries.items():
            if (
                subentry.subentry_type == SUBENTRY_CONVERSATION
                and subentry_id not in added
                and not is_owner_subentry(entry, subentry)  # its notify is OWNER's entity
            ):
                added.add(subentry_id)
                async_add_entities(
                    [ConversationNotify(entry, subentry)], config_subentry_id=subentry_id
                )

    @callback
    def entry_changed(change: ConfigEntryChange, changed: ConfigEntry) -> None:
        # Not an update listener: the options flow reloads by itself (OptionsFlowWithReload
        # refuses entries that have one). A removed subentry's entity goes with its
        # registry entry (Home Assistant removes both).
        if change is ConfigEntryChange.UPDATED and changed.entry_id == entry.entry_id:
            added.intersection_update(changed.subentries)
            add_named()

    add_named()
    entry.async_on_unload(
        async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, entry_changed)
    )


class PacerelleNotify(PacerelleEntity, NotifyEntity):
    _attr_name: str | None = None  # the agent's main feature: named like its device, notify.<agent>
    _attr_supported_features = NotifyEntityFeature.TITLE

    @property
    @override
    def available(self) -> bool:
        return self.status.state in REACHABLE_STATES

    @override
    async def async_send_message(self, message: str, title: str | None = None) -> None:
        text = f"{title}\n{message}" if title else message
        # The same translated errors as pacerelle.send_message gives.
        with client_errors(self.hass, self.entry):
            await self.runtime.agent.send_text(text)


class ConversationNotify(PacerelleNotify):
    """`notify.send_message` to a named conversation, through the client's one send path."""

    def __init__(self, entry: PacerelleConfigEntry, subentry: ConfigSubentry) -> None:
        self.conversation_id = str(subentry.data[CONF_CONVERSATION_ID])
        self.recipient = str(subentry.data[CONF_RECIPIENT])
        key = f"conversation_{self.conversation_id}"
        super().__init__(entry, NotifyEntityDescription(key=key))
        self._attr_name = subentry.title  # notify.<name>
        # No device: Home Assistant gives a device to one (sub)entry only, so putting this
        # entity on the agent's device would move the device, and its other entities, to
        # the subentry (and remove them with it). A conversation's own device, with
        # triggers scoped to it, is a later step.
        self._attr_device_info = None

    @override
    async def async_send_message(self, message: str, title: str | None = None) -> None:
        text = f"{title}\n{message}" if title else message
        with client_errors(self.hass, self.entry):
            await self.runtime.agent.send_text(
                text, conversation_id=self.conversation_id, to=self.recipient
            )
