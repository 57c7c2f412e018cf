"""Notice at start-up that the agent's store went backwards (an older copy was put back).

Each agent's store document carries a generation number, and a witness file beside it
(`.storage/pacerelle.generations`, Home Assistant's own storage, keyed by agent id) holds
the last one this Home Assistant wrote. Both advance at every start and at every clean
stop, the store first, so the witness is never ahead of a store that was not replaced.
At start-up a store behind its witness was put back from an older copy: its sessions are
older than the conversation, so a repair issue says so before the first message fails.

Limits, on purpose written down: the witness is in the same `.storage` folder, so a FULL
Home Assistant backup restore rolls both back together and is NOT seen here; only an older
agent folder put back on its own (a file copy, a sync tool, the store repair's own advice
to restore that folder) is. Pacerelle's relay would be the better witness (it knows which
prekeys and messages the newer state used), but its documented API tells the agent
nothing of what it holds, so a full restore is found by the decryption failures that
follow (issues/decrypt.py). A state copied while the agent was running (after its start,
before its stop) of the same run is also not seen: the generation moves only at start and
stop, not at every save, to keep Home Assistant's storage quiet.

What such a restored state handed over before is never handed over again, seen here or
not: the marks of the last hand-overs are kept beside this witness, outside the agent's
folder (client/state/handed_over_file.py, client/values/handed_over.py), and consulted for
every message.
"""

import logging
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from ..client import AgentStore, StoreError
from ..const import DOMAIN
from ..issues.runtime import raise_store_restored

_LOGGER = logging.getLogger(__name__)

GENERATION_KEY: Final = "generation"  # in the agent's store document
WITNESS_KEY: Final = f"{DOMAIN}.generations"
WITNESS_VERSION: Final = 1


def _witness(hass: HomeAssistant) -> Store[dict[str, int]]:
    return Store(hass, WITNESS_VERSION, WITNESS_KEY)


def stored_generation(document: dict[str, Any]) -> int:
    value = document.get(GENERATION_KEY)
    return value if type(value) is int and value >= 0 else 0  # stores before it: 0


async def async_found_restored(
    hass: HomeAssistant, document: dict[str, Any], *, agent_id: str, entry_id: str, agent_name: str
) -> bool:
    """Whether `document` is behind the witness (put back from an older copy): a repair
    issue says so. The client then replaces the one-time prekeys the newer state published
    (client/agent/identity.py), before `async_advance` moves the witness past it."""
    known = await _witness(hass).async_load() or {}
    witnessed = known.get(agent_id)
    restored = isinstance(witnessed, int) and stored_generation(document) < witnessed
    if restored:
        raise_store_restored(hass, entry_id, agent_name)
    return restored


async def async_advance(
    hass: HomeAssistant, store: AgentStore, document: dict[str, Any], agent_id: str
) -> dict[str, Any]:
    """Advance the store's generation past the witness, then the witness: the document as
    saved. Until then a start that failed sees the same restore again."""
    witness = _witness(hass)
    known = await witness.async_load() or {}
    witnessed = known.get(agent_id)
    generation = max(stored_generation(document), witnessed if isinstance(witnessed, int) else 0)
    return await _async_write(store, witness, known, document, agent_id, generation + 1)


async def async_advance_at_stop(hass: HomeAssistant, store: AgentStore, agent_id: str) -> None:
    """After the agent stopped: one more generation, so a copy taken while it ran is older."""
    try:
        document, _ = await store.load_data()
    except StoreError as err:  # checked at start: only a disk failure since, told at start
        _LOGGER.warning("Could not advance the store's generation at stop: %s", err)
        return
    await async_advance(hass, store, document, agent_id)


async def _async_write(
    store: AgentStore,
    witness: Store[dict[str, int]],
    known: dict[str, int],
    document: dict[str, Any],
    agent_id: str,
    generation: int,
) -> dict[str, Any]:
    document = {**document, GENERATION_KEY: generation}
    await store.save_keys({GENERATION_KEY: generation})  # the store first: the
    # witness never runs ahead
    await witness.async_save({**known, agent_id: generation})
    return document
