"""Where the agents' stores live inside Home Assistant, and what Home Assistant does to them.

The client owns each agent's store (client/state/agent_store.py: records, hand-over marks,
their lock, load, migration, commits). Home Assistant gives it a place and an executor:
the records in `<config>/.storage/pacerelle/`, each agent's marks beside that folder in
`<config>/.storage/pacerelle.handed_over.<agent id>` (a restore of the folder alone leaves
them as the newer state wrote them), file work in Home Assistant's executor. One
AgentStores per Home Assistant, so one store per agent whoever asks (config flow, runtime,
removal); every store is closed at EVENT_HOMEASSISTANT_CLOSE. Home Assistant's backups
include `.storage`, so the store and its key are backed up together (backup.py pauses the
writes meanwhile).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from homeassistant.const import EVENT_HOMEASSISTANT_CLOSE
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.util.hass_dict import HassKey

from ..client import AgentStore, AgentStores, StoreLocation

_STORES: HassKey[AgentStores] = HassKey("pacerelle_agent_stores")

STORE_DIRECTORY = ("pacerelle",)
__all__ = [
    "AgentStore",
    "agent_store",
    "async_pause_all",
    "async_resume_all",
]


def agent_stores(hass: HomeAssistant) -> AgentStores:
    """Home Assistant's one AgentStores (made at the first use, closed at its close)."""
    stores = hass.data.get(_STORES)
    if stores is None:
        storage = Path(hass.config.path(".storage"))

        def run_blocking[T](function: Callable[[], T]) -> Any:
            return hass.async_add_executor_job(function)

        location = StoreLocation(records=storage.joinpath(*STORE_DIRECTORY), marks=storage)
        stores = hass.data[_STORES] = AgentStores(location, run_blocking)

        @callback
        def close(_event: Event) -> None:
            stores.close_now()

        hass.bus.async_listen_once(EVENT_HOMEASSISTANT_CLOSE, close)
    return stores


def agent_store(hass: HomeAssistant, agent_id: str) -> AgentStore:
    """The agent's store (one per agent and Home Assistant)."""
    return agent_stores(hass).get(agent_id)


async def async_pause_all(hass: HomeAssistant) -> None:
    """Every agent's commits done and held, its WAL checkpointed, until `async_resume_all`."""
    await agent_stores(hass).pause_writes()


async def async_resume_all(hass: HomeAssistant) -> None:
    await agent_stores(hass).resume_writes()
