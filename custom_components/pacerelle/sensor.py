"""Sensors of an agent: its connection, its queues, its identity, its last message.

They describe the agent itself, which Home Assistant always knows (the connection state
sensor says "reconnecting" rather than going unavailable), so they stay available.
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

from . import PacerelleConfigEntry
from .client.agent import AgentStatus
from .client.agent_core import ConnectionState
from .entity import PacerelleEntity, async_device_info

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class PacerelleSensorDescription(SensorEntityDescription):
    value_fn: Callable[[AgentStatus], StateType | datetime]


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
        value_fn=lambda status: status.uncertain_sends,
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
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda status: status.verification_code,
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    device_info = await async_device_info(hass, entry)
    async_add_entities(
        PacerelleSensor(entry, device_info, description) for description in DESCRIPTIONS
    )


class PacerelleSensor(PacerelleEntity, SensorEntity):
    entity_description: PacerelleSensorDescription

    @property
    @override
    def native_value(self) -> StateType | datetime:
        return self.entity_description.value_fn(self.status)
