"""A backup taken while the agent runs holds a complete store (backup.py).

Before the backup the store's write-ahead log is folded into its database file and its
commits wait: the `.db` file copied alone (as a backup copies it, WAL or not) loads with
everything the agent had; a message arriving meanwhile is committed and fired after it.
"""

import shutil
from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.pacerelle import backup
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import migrate
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of, human_writes


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
