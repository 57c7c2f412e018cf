"""A store of the earlier format (`.enc`) migrates; a SIGKILL in the middle loses nothing.

The agent's store is put back as the previous release wrote it (the same document, in the
`.enc` file under the same key), grown with pending requests so that the migration takes a
moment; Home Assistant is killed while the new database is being built beside it. The next
start migrates again from the `.enc` file, which was kept: every request is still pending,
the session still opens the person's next message, nothing fires twice.
"""

import asyncio
import contextlib
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from tests.helpers.store_states import request
from tests.system.harness import EVENT_TIMEOUT, System
from tests.system.home_assistant_api import wait_for

GROWN = 300  # pending requests of 40 K characters: ~12 MB to migrate
KILL_POLL = 0.002


def _as_earlier_release(folder: Path, agent_id: str) -> int:
    """The store rewritten as the `.enc` file, with GROWN more pending requests; how many
    requests are pending in it."""
    store = RecordStore(folder, agent_id)
    extra, data = store.load(migrate)
    store.close()
    assert data is not None
    pending = dict(data.inbox.pending)
    for n in range(GROWN):
        grown = request(n, 40_000)
        pending[grown.message_id] = replace(grown, conversation_id="cnv_old")
    data = replace(data, inbox=replace(data.inbox, pending=pending))
    EncryptedFile(folder, agent_id).write({**extra, **data.sections()})
    for suffix in (".db", ".db-wal", ".db-shm"):
        (folder / f"{agent_id}{suffix}").unlink(missing_ok=True)
    return len(pending)


def _pending_in_database(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM records WHERE tbl = 'pending'"
        ).fetchone()
    connection.close()
    return int(count)


async def _pending_sensor(running: System) -> Any:
    states = await running.hass.rest("GET", "/api/states")
    [state] = [s for s in states if s["entity_id"].endswith("_pending_requests")]
    return state["state"]


async def test_a_sigkill_during_the_migration_loses_nothing(system: System) -> None:
    agent = await system.add_agent()
    first = await system.emulator.send(agent.conversation_id, text="before the upgrade")
    await system.wait_events(1, EVENT_TIMEOUT)
    await system.hass_process.stop()
    folder = system.hass_process.config_dir / ".storage" / "pacerelle"
    pending = await asyncio.to_thread(_as_earlier_release, folder, agent.agent_id)
    legacy = folder / f"{agent.agent_id}.enc"
    partial = folder / f"{agent.agent_id}.db.partial"

    starting = asyncio.create_task(system.hass_process.start())
    # Looked at every KILL_POLL: on a quiet machine the migration's file lives only a moment.
    await wait_for(partial.exists, 120, "the migration to start", every=KILL_POLL)
    await system.hass_process.kill()
    starting.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await starting
    assert legacy.exists(), "killed after the migration: nothing was tested"
    assert not (folder / f"{agent.agent_id}.db").exists()

    await system.hass_process.start()
    await system.hass.wait_entry_state(agent.entry_id, "loaded")
    await system.wait_online(agent)
    assert not legacy.exists()  # migrated, then removed
    assert not partial.exists()
    database = folder / f"{agent.agent_id}.db"
    assert await asyncio.to_thread(_pending_in_database, database) == pending
    assert await _pending_sensor(system) == str(pending)
    # The migrated session opens the person's next message; the first is not fired again.
    after = await system.emulator.send(agent.conversation_id, text="after the upgrade")
    events = await system.wait_events(2, EVENT_TIMEOUT)
    assert [event["message_id"] for event in events] == [first, after]
