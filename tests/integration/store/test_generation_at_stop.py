"""The generation at stop: a store that can no longer be written is left alone, with a warning."""

import logging
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from custom_components.pacerelle.client.agent.generation import (
    GENERATION_KEY,
    advance_at_stop,
)
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from custom_components.pacerelle.store.generation import (
    WITNESS_KEY,
    WITNESS_VERSION,
    GenerationFile,
)


async def test_an_unwritable_store_at_stop_is_not_advanced(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    store = agent_store(hass, "agt_stop")
    await store.create({GENERATION_KEY: 4})
    keys, _ = await store.load_data()
    witness: Store[dict[str, int]] = Store(hass, WITNESS_VERSION, WITNESS_KEY)
    await witness.async_save({"agt_stop": 4})
    await store.close()
    data_path = Path(hass.config.path(".storage", DOMAIN, "agt_stop.db"))

    def corrupt() -> bytes:
        data_path.write_bytes(b"not a store at all")
        return data_path.read_bytes()

    damaged = await hass.async_add_executor_job(corrupt)
    with caplog.at_level(logging.WARNING):
        await advance_at_stop(store, GenerationFile(hass, "agt_stop"), keys)

    assert "Could not advance the store's generation at stop" in caplog.text
    # Neither the store nor its witness moved: the next start sees the same damage.
    assert await hass.async_add_executor_job(data_path.read_bytes) == damaged
    assert await Store(hass, WITNESS_VERSION, WITNESS_KEY).async_load() == {"agt_stop": 4}


async def test_a_store_at_stop_advances_past_its_witness(hass: HomeAssistant) -> None:
    store = agent_store(hass, "agt_stop")
    await store.create({GENERATION_KEY: 2})
    keys, _ = await store.load_data()
    witness: Store[dict[str, int]] = Store(hass, WITNESS_VERSION, WITNESS_KEY)
    await witness.async_save({"agt_stop": 5, "agt_other": 1})

    await advance_at_stop(store, GenerationFile(hass, "agt_stop"), keys)

    assert (await store.load())[GENERATION_KEY] == 6
    assert await Store(hass, WITNESS_VERSION, WITNESS_KEY).async_load() == {
        "agt_stop": 6,
        "agt_other": 1,
    }
