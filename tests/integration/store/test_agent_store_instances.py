"""Two handles on one agent's store (config flow, runtime, stop) never race each other."""

import asyncio
from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.store.agent_store import agent_store

ROUNDS = 40


async def test_loads_and_saves_through_two_handles_never_collide(hass: HomeAssistant) -> None:
    writer, reader = agent_store(hass, "agt_race"), agent_store(hass, "agt_race")
    padding = "x" * 200_000  # a write long enough for a load to land in the middle of it
    await writer.create({"round": -1, "padding": padding})

    async def save(round_: int) -> None:
        await writer.save({"round": round_, "padding": padding})

    # A load removes leftover temporary files: never the one a save is about to rename.
    results = await asyncio.gather(
        *(job for n in range(ROUNDS) for job in (save(n), reader.load())),
        return_exceptions=True,
    )
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert (await reader.load())["round"] == ROUNDS - 1
    folder = Path(hass.config.path(".storage", "pacerelle"))
    assert not [path.name for path in folder.iterdir() if path.name.endswith(".tmp")]
