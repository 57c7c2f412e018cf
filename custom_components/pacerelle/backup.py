"""Home Assistant backups: each agent's store is one consistent file while a backup runs.

Before the backup, every open store's write-ahead log is folded into its database file
(the client's `AgentStores.pause_writes`, through store/agent_store.py) and its commits
are held until the backup is done: the `.db` file in the backup is complete on its own and
no commit lands half in the WAL, half not. Messages that arrive meanwhile wait for their
commit, so they are acknowledged to the relay only after it: the relay redelivers, nothing
is lost. The hold is bounded (the client's WRITE_HOLD_SECONDS, 5 minutes): a backup that
never ends (a crashed Supervisor sends no `backup/end`) stops the home that long at most;
past it commits go on into the WAL only, the database file unchanged until the backup
ends. The restore detection
(store/generation.py) is unchanged: the generation is in the store, the witness beside it.
"""

from homeassistant.core import HomeAssistant

from .store.agent_store import async_pause_all, async_resume_all


async def async_pre_backup(hass: HomeAssistant) -> None:
    """Checkpoint each agent's store and hold its commits."""
    await async_pause_all(hass)


async def async_post_backup(hass: HomeAssistant) -> None:
    """Let the commits go on."""
    await async_resume_all(hass)
