"""The WAL is folded into the database beside the commits, never inside one
(client/state/record_file.py `checkpoint_when_due`): a commit that crosses the WAL's bound
returns at once, later commits go on while the checkpoint runs, and the database file alone
then holds what was committed before it."""

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_components.pacerelle.client import AgentStores, StoreLocation
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.record_file import CHECKPOINT_PAGES, PAGE_SIZE
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.runtime import wait_until

INSTALLATION = {"installation": {"token": "t"}}
FILLER = "x" * 200_000  # a value of the integration's keys, rewritten at each commit


async def test_commits_never_wait_for_a_checkpoint(tmp_path: Path) -> None:
    gate = threading.Event()
    checkpoints: list[str] = []

    async def run_blocking[T](function: Callable[[], T]) -> T:
        def gated() -> T:
            if getattr(function, "__name__", "") == "checkpoint_when_due":
                checkpoints.append("started")
                gate.wait(30)
            return function()

        return await asyncio.to_thread(gated)

    stores = AgentStores(StoreLocation(tmp_path / "records", tmp_path), run_blocking)
    store = stores.get("agt")
    await store.create(INSTALLATION)
    await store.load_data()
    data = AgentData(await asyncio.to_thread(AgentSignalState.new))
    wal = tmp_path / "records" / "agt.db-wal"
    extra: dict[str, Any] = dict(INSTALLATION)
    count = 0
    while not checkpoints:  # until a commit finds the WAL past its bound
        count += 1
        assert count < 100, "no checkpoint beside the commits"
        extra = {**extra, "filler": f"{count}{FILLER}"}
        await store.commit(extra, data)
    assert wal.stat().st_size > CHECKPOINT_PAGES * PAGE_SIZE
    # The checkpoint is held in its job; commits go on and return meanwhile.
    for later in range(5):
        await asyncio.wait_for(store.commit({**extra, "later": later}, data), 10)
    gate.set()
    await wait_until(lambda: store._checkpointing is None)

    # The database file copied alone holds the commits before the checkpoint.
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in (".db", ".key"):
        content = await asyncio.to_thread((tmp_path / "records" / f"agt{suffix}").read_bytes)
        await asyncio.to_thread((copy / f"agt{suffix}").write_bytes, content)
    copied = RecordStore(copy, "agt")
    document, _ = await asyncio.to_thread(copied.load, migrate)
    await asyncio.to_thread(copied.close)
    assert str(document["filler"]).startswith(str(count))
    await store.close()
