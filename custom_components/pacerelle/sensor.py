"""Sensors of an agent: its connection, its queues, its identity, its last message.

The connection sensor is always available: it shows reconnecting, revoked (`disconnected`) or
stopped. The others stay available while the agent (re)connects (what it knows stays true) and
become unavailable once it is revoked or stopped. "Unconfirmed sends" is disabled by default
(also in pacerelle.get_status). Each named conversation has a "Members" sensor on its device
(`Agent.members`), with each member's devices' trust state, written again at every change of
trust and every message of the conversation. README "Entities" describes each sensor.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import override

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType

from .client import AgentStatus, ConnectionState, DeviceTrust
from .entity import REACHABLE_STATES, ConversationEntity, PacerelleEntity, async_add_named
from .runtime import PacerelleConfigEntry, PacerelleRuntime
from .signals import Delivered, message_signal

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PacerelleSensorDescription(SensorEntityDescription):
    value_fn: Callable[[AgentStatus], StateType | datetime] = lambda _status: None
    # For a figure the runtime keeps beside the agent (it replaces value_fn).
    runtime_value_fn: Callable[[PacerelleRuntime], StateType] | None = None
    always_available: bool = False


def _timestamp(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


DESCRIPTIONS: tuple[PacerelleSensorDescription, ...] = (
    PacerelleSensorDescription(
        key="connection_state",
        translation_key="connection_state",
        device_class=SensorDeviceClass.ENUM,
        options=[state.value for state in ConnectionState],
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda status: status.state.value,
        always_available=True,
    ),
    PacerelleSensorDescription(
        key="pending_requests",
        translation_key="pending_requests",
        state_class=SensorStateClass.MEASUREMENT,
        value_fn=lambda status: status.pending,
    ),
    PacerelleSensorDescription(
        key="uncertain_sends",
        translation_key="uncertain_sends",
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=lambda status: status.uncertain_sends,
    ),
    PacerelleSensorDescription(
        key="queued_sends",
        translation_key="queued_sends",
        state_class=SensorStateClass.MEASUREMENT,
        value_fn=lambda status: status.queued_sends,
    ),
    PacerelleSensorDescription(
        key="last_message",
        translation_key="last_message",
        device_class=SensorDeviceClass.TIMESTAMP,
        value_fn=lambda status: _timestamp(status.last_message_at),
    ),
    PacerelleSensorDescription(
        key="verification_code",
        translation_key="verification_code",
        # Named "Code": beside the code's lines the device page leaves a name 60 to 88
        # px (Chromium, 375 to 1920 px wide; tests/browser/test_trust_repair.py). Its entity
        # id follows the name in the user's language (`sensor.home_code` in English); an
        # entity made before 0.2.0 keeps its `sensor.<agent>_verification_code`.
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda status: status.verification_code,
    ),
    PacerelleSensorDescription(
        key="decryption_failures",
        translation_key="decryption_failures",
        # Counted since the agent started: back to 0 at every start, a new cycle.
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        runtime_value_fn=lambda runtime: runtime.decryption_failures.total,
    ),
)


# A named conversation's (its key is the conversation's: entity.py NamedConversation.key).
MEMBERS = SensorEntityDescription(
    key="members", translation_key="members", state_class=SensorStateClass.MEASUREMENT
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities(PacerelleSensor(entry, description) for description in DESCRIPTIONS)
    async_add_named(
        hass,
        entry,
        async_add_entities,
        lambda conversation: [
            ConversationMembersSensor(
                hass, entry, conversation, replace(MEMBERS, key=conversation.key(MEMBERS.key))
            )
        ],
    )


class PacerelleSensor(PacerelleEntity, SensorEntity):
    entity_description: PacerelleSensorDescription

    @property
    @override
    def available(self) -> bool:
        if self.entity_description.always_available:
            return True
        return self.status.state in REACHABLE_STATES

    @property
    @override
    def native_value(self) -> StateType | datetime:
        description = self.entity_description
        if description.runtime_value_fn is not None:
            return description.runtime_value_fn(self.runtime)
        return description.value_fn(self.status)


class ConversationMembersSensor(ConversationEntity, SensorEntity):
    """A named conversation's members and their devices' trust.

    Worked out when they can change (added, a trust decision, one of the conversation's
    messages: a group's keys of a new epoch come with them) and kept: the agent's status
    signals write the state again often, and reading the members walks the agent's history.
    """

    @override
    async def async_added_to_hass(self) -> None:
        self._refresh()
        await super().async_added_to_hass()
        self.async_on_remove(self.runtime.trust.add_listener(self._trust_changed))
        self.async_on_remove(
            async_dispatcher_connect(
                self.hass, message_signal(self.runtime.entry_id), self._message
            )
        )

    def _refresh(self) -> None:
        members = self.runtime.agent.members(self.conversation_id)
        self._attr_native_value = len(members)
        self._attr_extra_state_attributes = {
            "members": [
                {
                    "id": member.person_id,
                    "devices": {device.device_id: device.state.value for device in member.devices},
                }
                for member in members
            ]
        }

    @callback
    def _trust_changed(self, _device: DeviceTrust, _before: DeviceTrust | None) -> None:
        self._refresh()
        self.async_write_ha_state()

    @callback
    def _message(self, delivered: Delivered) -> None:
        if delivered.request.conversation_id == self.conversation_id:
            self._refresh()
            self.async_write_ha_state()
