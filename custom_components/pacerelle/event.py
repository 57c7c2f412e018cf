"""The event entity of an agent: one event per accepted message.

It mirrors the `pacerelle_message` bus event of its own entry (its data without the entry
and agent ids and without what people wrote), typed `widget_response` for widget answers
and `message` for the rest. It learns of requests from the agent (signals.py), never from
the bus, where anyone may fire a `pacerelle_message`. What people wrote (text, files,
widgets and their answers, transcripts) is never an attribute: Home Assistant shows an
entity's attributes to every user who may read it, and keeps them on disk across restarts
(`.storage/core.restore_state`, every backup). Automations read it from the bus event or a
device trigger, which only administrators and automations see.

Each named conversation has one too, on its device (entity.py): the same events, for that
conversation's messages only (`event.<name>_messages`).
"""

from dataclasses import dataclass, replace
from typing import Final, override

from homeassistant.components.event import EventEntity, EventEntityDescription
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .client import Request
from .const import CONF_AGENT_ID
from .entity import REACHABLE_STATES, ConversationEntity, PacerelleEntity, async_add_named
from .events import event_data
from .runtime import PacerelleConfigEntry
from .signals import Delivered, message_signal

PARALLEL_UPDATES = 0

EVENT_TYPE_MESSAGE: Final = "message"
EVENT_TYPE_WIDGET_RESPONSE: Final = "widget_response"
_ATTRIBUTES: Final = (
    "message_id",
    "conversation_id",
    "sender_id",
    "sender_device_id",
    "group",
    "kind",
    "reply_to_message_id",
    "received_at",
    "trusted",
    "trust_state",
)
"""The event data an attribute shows: who, where, when and what kind, never content."""


@dataclass(frozen=True, kw_only=True)
class PacerelleEventDescription(EventEntityDescription):
    """The incoming-messages event entity."""


MESSAGES = PacerelleEventDescription(
    key="messages",
    translation_key="messages",
    event_types=[EVENT_TYPE_MESSAGE, EVENT_TYPE_WIDGET_RESPONSE],
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([PacerelleMessageEvent(entry, MESSAGES)])
    async_add_named(
        hass,
        entry,
        async_add_entities,
        lambda conversation: [
            ConversationMessageEvent(
                hass,
                entry,
                conversation,
                replace(MESSAGES, key=conversation.key(MESSAGES.key)),
            )
        ],
    )


class PacerelleMessageEvent(PacerelleEntity, EventEntity):
    entity_description: PacerelleEventDescription

    @property
    @override
    def available(self) -> bool:
        return self.status.state in REACHABLE_STATES

    @override
    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        self.async_on_remove(
            async_dispatcher_connect(
                self.hass, message_signal(self.runtime.entry_id), self._handle_message
            )
        )

    def wants(self, request: Request) -> bool:
        """Whether the entity fires for the request (the agent's: for every one)."""
        return True

    @callback
    def _handle_message(self, delivered: Delivered) -> None:
        request = delivered.request
        if not self.wants(request):
            return
        event_type = EVENT_TYPE_WIDGET_RESPONSE if request.is_widget_answer else EVENT_TYPE_MESSAGE
        # The event's own data (one function, events.py); its ids are not shown.
        entry = self.entry
        data = event_data(
            entry.entry_id,
            str(entry.data[CONF_AGENT_ID]),
            request,
            delivered.saved,
            delivered.trust,
            delivered.transcript,
        )
        self._trigger_event(event_type, {name: data[name] for name in _ATTRIBUTES})
        self.async_write_ha_state()


class ConversationMessageEvent(ConversationEntity, PacerelleMessageEvent):
    """The messages of one named conversation."""

    @override
    def wants(self, request: Request) -> bool:
        return request.conversation_id == self.conversation_id
