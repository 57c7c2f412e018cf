"""Entity states to wait for, and snapshots as Home Assistant's own tests write them."""

from collections.abc import Callable
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.syrupy import (
    HomeAssistantSnapshotExtension,
    HomeAssistantSnapshotSerializer,
)
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.amber.serializer import AmberDataSerializer
from syrupy.types import SerializableData

from tests.helpers.runtime import wait_until


def state_of(hass: HomeAssistant, entity_id: str) -> str:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state.state


async def wait_state(
    hass: HomeAssistant, entity_id: str, expected: str | Callable[[str], bool], within: float = 10
) -> None:
    """Until the entity's state is `expected` (or satisfies it)."""

    def reached() -> bool:
        state = hass.states.get(entity_id)
        if state is None:
            return False
        return expected(state.state) if callable(expected) else state.state == expected

    await wait_until(reached, within)


class _SnapshotSerializer(HomeAssistantSnapshotSerializer):
    """The harness's serializer, one field the same on Home Assistant 2026.10 and 2026.11.

    2026.11 adds `compat_name` to entity registry entries (the name an entity had before a
    naming change, kept for integrations to offer as an alias). The pinned harness (written
    for 2026.10) serializes every attribute, so the same entry would need two snapshots.
    An unset `compat_name` (None) is left out, as on 2026.10; a set one stays in the
    snapshot, where it shows as a difference to look at.
    """

    @classmethod
    def _serializable_entity_registry_entry(cls, data: er.RegistryEntry) -> SerializableData:
        serialized = super()._serializable_entity_registry_entry(data)
        if serialized.get("compat_name", ...) is None:
            del serialized["compat_name"]
        return serialized


class _SnapshotExtension(HomeAssistantSnapshotExtension):
    serializer_class: type[AmberDataSerializer] = _SnapshotSerializer


def ha_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """Snapshots as Home Assistant's own tests write them (under tests/snapshots/).

    They hold on 2026.10 and 2026.11 alike: see _SnapshotSerializer.
    """
    return snapshot.use_extension(_SnapshotExtension)


def replacing(values: dict[str, str]) -> Callable[..., Any]:
    """A syrupy matcher that puts placeholders where run-specific values appear in strings."""

    def matcher(*, data: Any, path: Any) -> Any:
        if isinstance(data, str):
            for value, placeholder in values.items():
                data = data.replace(value, placeholder)
        return data

    return matcher
