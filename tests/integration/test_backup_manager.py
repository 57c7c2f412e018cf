"""A backup made by Home Assistant's backup manager while the agent runs holds a store that
loads with everything the agent had (backup.py, called by the manager before and after)."""

from pathlib import Path

from homeassistant.components.backup import DATA_MANAGER
from homeassistant.components.backup.manager import BackupManagerState
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.state.versions import migrate
from tests.helpers.agent import start_agent
from tests.helpers.backup_files import store_files_of
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes


async def test_a_backup_of_the_running_agent_loads_with_its_messages(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    assert await async_setup_component(hass, "backup", {})
    agent = await start_agent(hass, emulator)
    first = await human_writes(emulator, agent, text="before the backup")
    manager = hass.data[DATA_MANAGER]
    await manager.async_create_backup(
        agent_ids=["backup.local"],
        include_addons=None,
        include_all_addons=False,
        include_database=False,
        include_folders=None,
        include_homeassistant=True,
        name="with the agent running",
        password=None,
    )
    backups = Path(hass.config.path("backups"))
    await wait_until(lambda: manager.state is BackupManagerState.IDLE, within=60)
    [backup] = list(backups.glob("*.tar"))
    store = await hass.async_add_executor_job(
        store_files_of, backup, agent.installed.agent_id, tmp_path / "restored"
    )
    _, data = await hass.async_add_executor_job(store.load, migrate)
    assert data is not None
    assert first["message_id"] in data.inbox.pending
    await hass.async_add_executor_job(store.close)
    # The agent goes on after the backup.
    later = await human_writes(emulator, agent, text="after the backup")
    assert later["text"] == "after the backup"
