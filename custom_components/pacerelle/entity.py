"""What every Pacerelle entity shares: its agent's device and the status signal.

One device per agent (a service, not hardware), registered in async_setup_entry (device.py);
entities point at it by its identifiers. Unique ids are the config entry id and the entity's
key: a reauth (a new agent id) keeps every entity id. Entities never poll: the runtime sends
`status_signal(entry_id)` whenever the connection or the agent's counters may have changed,
and each entity writes its state again from `runtime.status`.
"""

from typing import override

from homeassistant.core import callback
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity import Entity, EntityDescription

from .client import AgentStatus, ConnectionState
from .device import agent_name, device_identifiers
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
