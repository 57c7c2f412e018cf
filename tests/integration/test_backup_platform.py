"""A backup taken while the agent runs holds a complete store (backup.py).

Before the backup the store's write-ahead log is folded into its database file and its
commits wait (for a bounded time): the `.db` file copied alone (as a backup copies it, WAL
or not) loads with everything the agent had; a message arriving meanwhile is committed and
fired after it.
"""

import shutil
from pathlib import Path

import pytest
from homeassistant.components.backup import DATA_MANAGER
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle import backup
from custom_components.pacerelle.client.state import agent_store as client_agent_store
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, event_of, human_writes


def _copied_alone(folder: Path, agent_id: str, target: Path) -> RecordStore:
    """The database and key copied without the WAL, as a backup of that instant."""
    target.mkdir()
    for suffix in (".db", ".key"):
        shutil.copy2(folder / f"{agent_id}{suffix}", target / f"{agent_id}{suffix}")
    return RecordStore(target, agent_id)


async def test_a_backup_holds_a_complete_store_and_commits_wait_for_it(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator)
    first = await human_writes(emulator, agent, text="before the backup")
    folder = Path(hass.config.path(".storage", DOMAIN))
    agent_id = agent.installed.agent_id

    await backup.async_pre_backup(hass)
    try:
        wal = folder / f"{agent_id}.db-wal"
        assert not wal.exists() or wal.stat().st_size == 0
        copy = await hass.async_add_executor_job(
            _copied_alone, folder, agent_id, tmp_path / "backup"
        )
        _, data = await hass.async_add_executor_job(copy.load, migrate)
        assert data is not None
        assert first["message_id"] in data.inbox.pending
        await hass.async_add_executor_job(copy.close)
        # A message meanwhile: received from the relay, committed only after the backup.
        later = await emulator.send(agent.conversation_id, text="during the backup")
        core = agent.runtime.agent._core
        await wait_until(core.lock.locked)
        assert later not in agent.runtime.agent.data.inbox.pending
        assert all(event.data["message_id"] != later for event in agent.events)
    finally:
        await backup.async_post_backup(hass)
    assert (await event_of(agent, later))["text"] == "during the backup"
    await wait_until(lambda: later in agent.runtime.agent.data.inbox.pending)


async def test_a_backup_that_never_ends_holds_the_home_for_a_bounded_time(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Supervisor sends `backup/start` and crashes before `backup/end`: after the hold's
    bound (shortened here from 5 minutes) messages fire and sends go again, while the
    database file a backup might still be copying stays as the checkpoint left it."""
    monkeypatch.setattr(client_agent_store, "WRITE_HOLD_SECONDS", 1)
    assert await async_setup_component(hass, "backup", {})
    agent = await start_agent(hass, emulator)
    agent_id = agent.installed.agent_id
    database = Path(hass.config.path(".storage", DOMAIN, f"{agent_id}.db"))
    # What the Supervisor's `backup/start` runs (the command exists on Supervisor installs).
    manager = hass.data[DATA_MANAGER]
    await manager.async_pre_backup_actions()
    checkpointed = await hass.async_add_executor_job(database.read_bytes)

    during = await human_writes(emulator, agent, text="while the backup never ends")
    await call(hass, "send_message", {"text": "The door is locked"})
    [sent] = await emulator.wait_inbox(agent.conversation_id, 1)
    assert sent["text"] == "The door is locked"
    assert await hass.async_add_executor_job(database.read_bytes) == checkpointed
    assert [e.data["message_id"] for e in agent.events].count(during["message_id"]) == 1

    # The backup ends at last: the checkpoints run again, and the next backup's database
    # file, copied alone, holds what arrived meanwhile.
    await manager.async_post_backup_actions()
    await backup.async_pre_backup(hass)
    try:
        copy = await hass.async_add_executor_job(
            _copied_alone, database.parent, agent_id, tmp_path / "next"
        )
        _, data = await hass.async_add_executor_job(copy.load, migrate)
        await hass.async_add_executor_job(copy.close)
    finally:
        await backup.async_post_backup(hass)
    assert data is not None
    assert during["message_id"] in data.inbox.pending
