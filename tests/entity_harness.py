"""An agent set up in Home Assistant against the emulator, and its entities by key."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.syrupy import (
    HomeAssistantSnapshotExtension,
    HomeAssistantSnapshotSerializer,
)
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.amber.serializer import AmberDataSerializer
from syrupy.types import SerializableData

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.emulator_fixtures import EmulatorHandle, Installed
from tests.runtime_harness import add_entry, wait_until


@dataclass
class Setup:
    installed: Installed
    entry: MockConfigEntry
    runtime: PacerelleRuntime

    def entity_id(self, hass: HomeAssistant, platform: str, key: str) -> str:
        unique_id = f"{self.entry.entry_id}_{key}"
        entity_id = er.async_get(hass).async_get_entity_id(platform, DOMAIN, unique_id)
        assert entity_id is not None, f"no {platform} entity {unique_id}"
        return entity_id

    def volatile(self) -> dict[str, str]:
        """Values that differ on every run, with the placeholder snapshots show instead."""
        return {
            self.installed.agent_id: "<agent_id>",
            self.installed.owner_id: "<owner_id>",
            self.installed.conversation_id: "<conversation_id>",
            self.entry.entry_id: "<entry_id>",
            self.runtime.status.verification_code: "<verification_code>",
        }


async def setup_agent(
    hass: HomeAssistant, emulator: EmulatorHandle, *, options: dict[str, Any] | None = None
) -> Setup:
    """An installed agent, its entry set up, connected."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed, options=options)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()
    return Setup(installed, entry, runtime)


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
