"""Issue 12 item 9: what a kill during a write leaves behind is removed when the entry loads."""

import os
from pathlib import Path

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.store.agent_store import STORE_DIRECTORY
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle


def _litter(directory: Path, agent_id: str) -> tuple[list[str], list[str]]:
    """Leftovers of killed writes of this store, and files that are not ours to remove."""
    ours = [f".{agent_id}.{index:08x}.tmp" for index in (1, 0xDEADBEEF, 0x0BADF00D)]
    for name in ours:
        (directory / name).write_bytes(os.urandom(64))  # half an encrypted document
    outside = directory.parent / "outside.txt"
    outside.write_text("not the agent's")
    os.symlink(outside, directory / f".{agent_id}.cafebabe.tmp")
    others = [f".{agent_id}.cafebabe.tmp", ".agt_other.12345678.tmp", f".{agent_id}.tmp"]
    for name in others[1:]:
        (directory / name).write_text("not a leftover of this store")
    return ours, others


async def test_leftover_temporary_files_are_removed_at_load(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    directory = Path(hass.config.path(".storage", *STORE_DIRECTORY))
    ours, others = await hass.async_add_executor_job(_litter, directory, installed.agent_id)

    async with connected_entry(hass, entry):
        assert entry.state is ConfigEntryState.LOADED

    left = set(await hass.async_add_executor_job(os.listdir, directory))
    assert not left & set(ours)
    assert set(others) <= left  # a link named like ours, other stores, other names
    outside = directory.parent / "outside.txt"
    assert await hass.async_add_executor_job(outside.read_text) == "not the agent's"
