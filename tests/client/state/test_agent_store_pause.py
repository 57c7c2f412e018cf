"""The client's store pauses for a backup: `pause_writes` returns only once the commit in
flight is done (its rows are in the checkpointed database), and holds every later commit
until `resume_writes` (client/state/agent_store.py)."""

import asyncio
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from custom_components.pacerelle.client import AgentStores, StoreLocation
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import AgentData

INSTALLATION = {"installation": {"token": "t"}}
HELD = 0.3  # how long a held commit is shown not to finish (it would at once)


async def to_thread[T](function: Callable[[], T]) -> T:
    return await asyncio.to_thread(function)


async def test_a_pause_waits_for_the_commit_in_flight_and_holds_the_next(
    tmp_path: Path,
) -> None:
    stores = AgentStores(StoreLocation(tmp_path / "records", tmp_path), to_thread)
    store = stores.get("agt")
    await store.create(INSTALLATION)
    await store.load_data()
    data = AgentData(await asyncio.to_thread(AgentSignalState.new))
    entered, gate = threading.Event(), threading.Event()

    def gated(value: AgentData) -> AgentData:
        entered.set()
        gate.wait(10)
        return value

    in_flight = asyncio.create_task(store.commit(INSTALLATION, data, gated))
    await asyncio.to_thread(entered.wait, 10)
    pause = asyncio.create_task(stores.pause_writes())
    done, _ = await asyncio.wait({pause}, timeout=HELD)
    assert not done  # the commit is still in its executor job
    gate.set()
    await pause
    assert in_flight.done()

    # The database file alone (as a backup copies it) holds the commit: checkpointed.
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in (".db", ".key"):
        content = await asyncio.to_thread((tmp_path / "records" / f"agt{suffix}").read_bytes)
        await asyncio.to_thread((copy / f"agt{suffix}").write_bytes, content)
    copied_store = RecordStore(copy, "agt")
    _, copied = await asyncio.to_thread(copied_store.load, migrate)
    await asyncio.to_thread(copied_store.close)
    assert copied is not None
    assert copied.signal.prekeys.identity_key == data.signal.prekeys.identity_key

    later = asyncio.create_task(store.save_keys({"generation": 7}))
    done, _ = await asyncio.wait({later}, timeout=HELD)
    assert not done  # held by the pause
    await stores.resume_writes()
    await later
    assert (await store.load())["generation"] == 7
    for path in (
        tmp_path / "records",
        tmp_path / "records" / "agt.db",
        tmp_path / "pacerelle.handed_over.agt",
    ):
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path
    await store.close()
