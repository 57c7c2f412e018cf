"""What every Pacerelle entity shares: its agent's device and the status signal.

One device per agent (a service, not hardware). Entities never poll: the runtime sends
`status_signal(entry_id)` whenever the connection or the agent's counters may have changed,
and each entity writes its state again from `runtime.status`.
"""

from typing import override

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity import Entity, EntityDescription
from homeassistant.loader import async_get_integration

from . import PacerelleConfigEntry
from .client.agent import AgentStatus
from .client.agent_core import ConnectionState
from .const import CONF_AGENT_ID, CONF_AGENT_NAME, DOMAIN
from .runtime import PacerelleRuntime, status_signal

# The notify and event entities stay available while the agent (re)connects: Home Assistant
# silently skips unavailable entities in an action, while a send now fails with an error
# that says why. A revoked or stopped agent has nothing behind them.
REACHABLE_STATES = frozenset(
    {ConnectionState.CONNECTING, ConnectionState.CONNECTED, ConnectionState.RECONNECTING}
)


def agent_name(entry: PacerelleConfigEntry) -> str:
    return str(entry.data.get(CONF_AGENT_NAME) or entry.title)


async def async_device_info(hass: HomeAssistant, entry: PacerelleConfigEntry) -> DeviceInfo:
    """The agent's device; its software version is the integration's."""
    integration = await async_get_integration(hass, DOMAIN)
    return DeviceInfo(
        identifiers={(DOMAIN, entry.data[CONF_AGENT_ID])},
        entry_type=DeviceEntryType.SERVICE,
        manufacturer="Pacerelle",
        model="Agent",
        name=agent_name(entry),
        sw_version=str(integration.version) if integration.version else None,
    )


class PacerelleEntity(Entity):
    """An entity of one agent, refreshed by the agent's status signal."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(
        self, entry: PacerelleConfigEntry, device_info: DeviceInfo, description: EntityDescription
    ) -> None:
        self.entity_description = description
        self.entry = entry
        self.runtime: PacerelleRuntime = entry.runtime_data
        self.agent_name = agent_name(entry)
        self._attr_unique_id = f"{entry.data[CONF_AGENT_ID]}_{description.key}"
        self._attr_device_info = device_info

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
