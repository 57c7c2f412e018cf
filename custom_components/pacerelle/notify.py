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
message is sealed only with a key a trusted session delivered). It is the main entity of
the conversation's device (entity.py `ConversationEntity`), named as it: `notify.<name>`.
"""

from typing import override

from homeassistant.components.notify import NotifyEntity, NotifyEntityDescription

# Where Home Assistant defines it: the notify package uses it without re-exporting it, so
# mypy --strict refuses it from there.
from homeassistant.components.notify.const import NotifyEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .actions.common import client_errors
from .entity import (
    REACHABLE_STATES,
    ConversationEntity,
    NamedConversation,
    PacerelleEntity,
    async_add_named,
)
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
    async_add_named(
        hass,
        entry,
        async_add_entities,
        # The owner's direct conversation's notify is OWNER's entity (entity.py).
        lambda conversation: (
            [] if conversation.owner else [ConversationNotify(hass, entry, conversation)]
        ),
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


class ConversationNotify(ConversationEntity, PacerelleNotify):
    """`notify.send_message` to a named conversation, through the client's one send path."""

    def __init__(
        self, hass: HomeAssistant, entry: PacerelleConfigEntry, conversation: NamedConversation
    ) -> None:
        key = conversation.key()
        super().__init__(hass, entry, conversation, NotifyEntityDescription(key=key))

    @override
    async def async_send_message(self, message: str, title: str | None = None) -> None:
        text = f"{title}\n{message}" if title else message
        with client_errors(self.hass, self.entry):
            await self.runtime.agent.send_text(text, conversation_id=self.conversation_id)
