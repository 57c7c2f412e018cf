"""What a soak month measures of Home Assistant's side: the store on disk, its largest
table, memory, tasks, file descriptors and repairs (soak.py prints them, one row a month).

The store is read from the bench's process (SQLite read-only, in a thread): Home
Assistant's memory, tasks and descriptors are its own, untouched by the measuring.
"""

import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_components.pacerelle.store.agent_store import STORE_DIRECTORY
from tests.bench.soak_system import Household

MIB = 1024 * 1024


@dataclass(frozen=True)
class Sample:
    records_bytes: int
    wal_bytes: int
    largest_table: tuple[str, int]
    rss: int
    tasks: int
    fds: int
    repairs: list[str]
    listeners: int
    probe: dict[str, Any]


async def sample(household: Household, *, objects: bool = False) -> Sample:
    folder = household.hass_process.config_dir.joinpath(".storage", *STORE_DIRECTORY)
    records, wal, largest = await asyncio.to_thread(_store, folder)
    probe = await household.probe("figures", {"objects": True} if objects else None)
    process = household.hass_process
    return Sample(
        records_bytes=records,
        wal_bytes=wal,
        largest_table=largest,
        rss=process.rss_bytes(),
        tasks=int(probe["tasks"]),
        fds=process.open_fds(),
        repairs=list(probe["repairs"]),
        listeners=int(probe["bus_listeners"]) + int(probe["dispatcher_targets"]),
        probe=probe,
    )


def _store(folder: Path) -> tuple[int, int, tuple[str, int]]:
    """(bytes of the databases, bytes of their WALs, the largest table of any and its rows)."""
    records = sum(path.stat().st_size for path in folder.glob("*.db"))
    wal = sum(path.stat().st_size for path in folder.glob("*.db-wal"))
    largest = ("none", 0)
    for database in folder.glob("*.db"):
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
        try:
            rows = connection.execute(
                "SELECT tbl, count(*) FROM records GROUP BY tbl ORDER BY 2 DESC LIMIT 1"
            ).fetchall()
        finally:
            connection.close()
        if rows and rows[0][1] > largest[1]:
            largest = (str(rows[0][0]), int(rows[0][1]))
    return records, wal, largest
