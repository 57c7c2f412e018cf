"""Deleting an agent's entry deletes its encrypted store (identity, keys, token) and the
marks of what it handed over, kept beside its folder (store/handed_over.py)."""

from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle


async def test_deleting_the_entry_deletes_the_store(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    other = await start_agent(hass, emulator)
    folder = Path(hass.config.path(".storage", DOMAIN))
    agent_id = setup.installed.agent_id
    assert {path.name for path in folder.glob(f"{agent_id}.*")} == {
        f"{agent_id}.db",
        f"{agent_id}.db-shm",
        f"{agent_id}.db-wal",
        f"{agent_id}.key",
        f"{agent_id}.lock",
    }
    marks = folder.parent / f"{DOMAIN}.handed_over.{agent_id}"
    assert marks.is_file()
    assert await hass.config_entries.async_remove(setup.entry.entry_id)
    await hass.async_block_till_done()
    assert not await agent_store(hass, agent_id).exists()
    assert list(folder.glob(f"{agent_id}.*")) == []
    assert not marks.exists()
    assert (folder.parent / f"{DOMAIN}.handed_over.{other.installed.agent_id}").is_file()
    # Another agent's store is not touched.
    assert await agent_store(hass, other.installed.agent_id).exists()
    assert await hass.config_entries.async_unload(other.entry.entry_id)


async def test_deleting_the_entry_forgets_its_trust_decisions(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, object]
) -> None:
    setup = await start_agent(hass, emulator, spoken=True)
    store = agent_store(hass, setup.installed.agent_id)
    # The decisions are in the agent's store (client/trust/kept.py), which goes with it...
    assert [d["device_id"] for d in (await store.load())["trust"]["devices"]] == ["1"]
    key = f"{DOMAIN}.trust.{setup.entry.entry_id}"
    assert key not in hass_storage
    # ...and so does a file where an earlier version kept them, if one is left.
    hass_storage[key] = {"version": 1, "minor_version": 1, "key": key, "data": {"devices": []}}
    assert await hass.config_entries.async_remove(setup.entry.entry_id)
    await hass.async_block_till_done()
    assert not await store.exists()
    assert key not in hass_storage
