"""Sensors of an agent: its connection, its queues, its identity, its last message.

The connection sensor is always available: it is how the user sees that the agent is
reconnecting, revoked (`disconnected`) or stopped. The others describe a running agent:
they stay available while it (re)connects (what it knows stays true during an outage) and
become unavailable once it is revoked or stopped, when no agent is behind them any more.
"Unconfirmed sends" is disabled by default: it is almost always 0, and the same figure is
in pacerelle.get_status and the diagnostics. "Undecryptable messages" counts the direct
messages the agent could not decrypt since it started (per device in the diagnostics; see
issues/decrypt.py). "Queued sends" counts the messages kept while offline, waiting for the
connection (client/outbox/queue.py): above 0 only during an outage.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import override

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType

from .client import AgentStatus, ConnectionState
from .entity import REACHABLE_STATES, PacerelleEntity
from .runtime import PacerelleConfigEntry, PacerelleRuntime

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PacerelleSensorDescription(SensorEntityDescription):
    value_fn: Callable[[AgentStatus], StateType | datetime] = lambda _status: None
    # For a figure the runtime keeps beside the agent (it replaces value_fn).
    runtime_value_fn: Callable[[PacerelleRuntime], StateType] | None = None
    always_available: bool = False
    # What a new entity id is made of, when the (shorter) name is not it: an id stays what
    # it was before the name changed (Home Assistant prefixes the device's name).
    object_id: str | None = None


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
        # px (Chromium, 375 to 1920 px wide; tests/browser/test_trust_repair.py).
        object_id="Verification code",
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda status: status.verification_code,
    ),
    PacerelleSensorDescription(
        key="decryption_failures",
        translation_key="decryption_failures",
        state_class=SensorStateClass.TOTAL,
        entity_category=EntityCategory.DIAGNOSTIC,
        runtime_value_fn=lambda runtime: runtime.decryption_failures.total,
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities(PacerelleSensor(entry, description) for description in DESCRIPTIONS)


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
    def suggested_object_id(self) -> str | None:
        return self.entity_description.object_id or super().suggested_object_id

    @property
    @override
    def native_value(self) -> StateType | datetime:
        description = self.entity_description
        if description.runtime_value_fn is not None:
            return description.runtime_value_fn(self.runtime)
        return description.value_fn(self.status)
