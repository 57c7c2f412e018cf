"""The store's generation against the host's witness: a store put back from an older copy.

The store's integration keys carry a generation number; the host keeps a witness of the last
one written, outside the agent's folder. Both advance at every start and every clean stop,
the store first, so the witness is never ahead of a store that was not replaced: a store
behind its witness is an older copy. A full restore of the host's storage rolls both back
together and is not seen here (the decryption failures that follow are), nor is a copy of
the same run (the generation moves at start and stop only).
"""

import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol

from ..state.errors import StoreError

_LOGGER = logging.getLogger(__name__)

GENERATION_KEY: Final = "generation"  # an integration key of the agent's store


class GenerationWitness(Protocol):
    """The host's record of the last generation written, per agent (outside its folder)."""

    async def last(self) -> int | None: ...

    async def record(self, generation: int) -> None: ...


class GenerationStore(Protocol):
    async def save_keys(self, values: dict[str, Any]) -> None: ...


def stored_generation(keys: Mapping[str, Any]) -> int:
    """The store's generation (stores from before it: 0)."""
    value = keys.get(GENERATION_KEY)
    return value if type(value) is int and value >= 0 else 0


def behind(keys: Mapping[str, Any], witnessed: int | None) -> bool:
    """Whether the store is behind its witness: put back from an older copy."""
    return witnessed is not None and stored_generation(keys) < witnessed


async def advance(
    store: GenerationStore, witness: GenerationWitness, keys: Mapping[str, Any]
) -> dict[str, Any]:
    """Advance the store's generation past both, then the witness; the keys as saved. Until
    then a start that failed sees the same restore again."""
    witnessed = await witness.last()
    generation = max(stored_generation(keys), witnessed or 0) + 1
    await store.save_keys({GENERATION_KEY: generation})  # the store first: the witness
    await witness.record(generation)  # never runs ahead of it
    return {**keys, GENERATION_KEY: generation}


async def advance_at_stop(
    store: GenerationStore, witness: GenerationWitness, keys: Mapping[str, Any]
) -> None:
    """After the agent stopped: one more generation, so a copy taken while it ran is older. A
    store that cannot be written is left as it is (told at the next start), with a warning."""
    try:
        await advance(store, witness, keys)
    except (StoreError, OSError) as err:
        _LOGGER.warning("Could not advance the store's generation at stop: %s", err)
