"""The witness of each agent's store generation, kept in Home Assistant's own storage.

`.storage/pacerelle.generations` (keyed by agent id) holds the last generation each agent's
store was given; the client compares and advances both (client/agent/generation.py). It is in
the same `.storage` folder, so a full backup restore rolls both back together and is not seen
there; only an agent folder put back on its own (a file copy, a sync tool, the store repair's
own advice) is. Writes of several agents are serialized: each reads, changes its own key and
saves.
"""

import asyncio
from typing import Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN

WITNESS_KEY: Final = f"{DOMAIN}.generations"
WITNESS_VERSION: Final = 1
_LOCK: HassKey[asyncio.Lock] = HassKey("pacerelle_generation_witness_lock")


class GenerationFile:
    """One agent's entry in the witness (the client's GenerationWitness)."""

    def __init__(self, hass: HomeAssistant, agent_id: str) -> None:
        self._store: Store[dict[str, int]] = Store(hass, WITNESS_VERSION, WITNESS_KEY)
        self._agent_id = agent_id
        self._lock = hass.data.setdefault(_LOCK, asyncio.Lock())

    async def last(self) -> int | None:
        witnessed = (await self._store.async_load() or {}).get(self._agent_id)
        return witnessed if type(witnessed) is int else None

    async def record(self, generation: int) -> None:
        async with self._lock:
            known = await self._store.async_load() or {}
            await self._store.async_save({**known, self._agent_id: generation})
