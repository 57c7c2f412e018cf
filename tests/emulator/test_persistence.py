"""The state file: a row per record, written per change, converted from JSON once."""

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.emulator.persistence import JSON_BACKUP_SUFFIX, SQLITE_MAGIC, Storage, read_state
from tests.emulator.state import (
    BlobRecord,
    ConversationLog,
    DeviceRecord,
    EmulatorState,
    GroupRecord,
    Installation,
)
from tests.system.processes import EmulatorProcess

SNAPSHOT_CHARS = 20_000
SMALL, LARGE = 10, 5_000
KILLED_AFTER = 30


def _written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def _household(messages: int) -> EmulatorState:
    """One agent, one device, one conversation whose logs hold `messages` entries."""
    state = EmulatorState()
    state.installations["agt_1"] = Installation(
        "agt_1", "usr_1", "conv_1", "Home", "", "cli_1", "pit_1", 1.0
    )
    state.devices["usr_1/1"] = DeviceRecord("usr_1", "1", snapshot_b64="s" * SNAPSHOT_CHARS)
    log = state.conversation_log("conv_1")
    for number in range(messages):
        entries = log.sent if number % 2 else log.inbox
        entries.append({"message_id": f"msg_{number}", "text": "hello there " * 5})
    state.queues["agt_1"] = [{"id": "msg_waiting", "payload_b64": "p" * 400}]
    state.last_device["conv_1"] = "1"
    return state


def _one_message(state: EmulatorState, number: int) -> None:
    """What a message and its answer change: the queue, the device's store, the logs."""
    state.queues["agt_1"].append({"id": f"new_{number}", "payload_b64": "p" * 400})
    del state.queues["agt_1"][0]
    device = state.devices["usr_1/1"]
    device.snapshot_b64 = str(number % 10) * SNAPSHOT_CHARS
    log = state.conversations["conv_1"]
    log.sent.append({"message_id": f"new_{number}", "text": "hello"})
    log.inbox.append({"message_id": f"answer_{number}", "text": "hi"})


def _bytes_per_change(directory: Path, messages: int) -> int:
    storage = Storage(directory / "state.json")
    storage.load()
    state = _household(messages)
    storage.save(state)
    written = []
    for number in range(20):
        _one_message(state, number)
        before = _written()
        storage.save(state)
        written.append(_written() - before)
    storage.close()
    return sorted(written)[len(written) // 2]


def test_a_change_writes_as_many_bytes_at_a_large_state_as_at_a_small_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small = _bytes_per_change(tmp_path / "small", SMALL)
    large = _bytes_per_change(tmp_path / "large", LARGE)
    whole = len(json.dumps(_household(LARGE).to_json()))
    assert small > 0
    # Pages, not records: a deeper B-tree may touch one page more.
    assert large <= small + 3 * 4096, (small, large)
    assert large < whole / 5, (large, whole)


def _kept(state: EmulatorState) -> dict[str, Any]:
    """The state as the file keeps it: an empty queue is no queue."""
    data = state.to_json()
    data["queues"] = {key: value for key, value in data["queues"].items() if value}
    return data


def _busy(storage: Storage) -> EmulatorState:
    """A state through every kind of change, saved after each."""
    storage.load()
    state = _household(30)
    storage.save(state)
    for number in range(5):
        _one_message(state, number)
        storage.save(state)
    state.blobs["blb_1"] = BlobRecord("blb_1", "ab", 3, "agt_1", "conv_1")
    state.groups["group:g"] = GroupRecord("group:g", "G", "usr_1", ["usr_1"], ["agt_1"])
    state.groups["group:g"].inbox.append({"message_id": "g1"})
    state.group_keys = [{"conversation_id": "group:g", "epoch": 0}]
    storage.save(state)
    state.devices["usr_1/2"] = DeviceRecord("usr_1", "2")
    state.last_device["conv_1"] = "2"
    state.last_device["conv_2"] = "1"
    state.queues["agt_2"] = [{"id": "x"}]
    state.clock_offset = 60.0
    storage.save(state)
    del state.devices["usr_1/1"]
    del state.last_device["conv_2"]
    del state.queues["agt_2"]
    state.queues["agt_1"].clear()
    state.group_keys = []
    state.installations["agt_1"].revoked = True
    state.conversations["conv_1"].inbox = state.conversations["conv_1"].inbox[:3]
    state.conversations["conv_2"] = ConversationLog("conv_2", sent=[{"message_id": "a"}])
    storage.save(state)
    return state


def test_the_file_holds_the_state_after_every_kind_of_change(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    storage = Storage(path)
    state = _busy(storage)
    assert read_state(path) == _kept(state)
    storage.close()
    again = Storage(path)
    assert again.load().to_json() == _kept(state)
    again.close()
    assert sorted(item.name for item in tmp_path.iterdir()) == ["state.json"]


def test_a_save_without_a_change_writes_nothing(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "state.json")
    state = _busy(storage)
    before = _written()
    storage.save(state)
    assert _written() == before
    storage.close()


def test_a_json_state_file_is_converted_once_and_kept_beside(tmp_path: Path) -> None:
    path = tmp_path / ".pacerelle-emulator.json"
    old = _household(40)
    old.clock_offset = 12.5
    path.write_text(json.dumps(old.to_json()))
    # A kill during an earlier conversion left its file behind: it is built again.
    (tmp_path / ".pacerelle-emulator.json.converting").write_bytes(b"half")

    storage = Storage(path)
    state = storage.load()
    assert state.to_json() == old.to_json()
    _one_message(state, 1)
    storage.save(state)
    storage.close()

    assert path.read_bytes().startswith(SQLITE_MAGIC)
    backup = path.with_name(path.name + JSON_BACKUP_SUFFIX)
    assert json.loads(backup.read_text()) == old.to_json()
    assert sorted(item.name for item in tmp_path.iterdir()) == [path.name, backup.name]
    reloaded = Storage(path)
    assert reloaded.load().to_json() == _kept(state)
    reloaded.close()


class _FailingOnce:
    """A connection whose first insert of an entry fails, as a full disk would."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.failed = False

    def execute(self, sql: str, parameters: tuple[object, ...] = ()) -> sqlite3.Cursor:
        if not self.failed and sql.startswith("INSERT OR REPLACE INTO entry"):
            self.failed = True
            raise sqlite3.OperationalError("database or disk is full")
        return self.connection.execute(sql, parameters)

    def close(self) -> None:
        self.connection.close()


def test_a_failed_transaction_is_written_by_the_next_save(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    storage = Storage(path)
    state = _busy(storage)
    real = storage._connection
    assert real is not None
    storage._connection = _FailingOnce(real)  # type: ignore[assignment]
    state.queues["agt_1"].append({"id": "late"})
    state.conversations["conv_1"].sent.append({"message_id": "late"})
    state.devices["usr_1/2"].snapshot_b64 = "changed"
    with pytest.raises(sqlite3.OperationalError):
        storage.save(state)
    assert read_state(path) != _kept(state)
    storage.save(state)
    assert read_state(path) == _kept(state)
    storage.close()


async def test_a_killed_emulator_keeps_every_send_it_answered(
    tmp_path: Path, socket_enabled: None
) -> None:
    """SIGKILL while sends are being written: the file loads, and holds each answered one."""
    process = EmulatorProcess(tmp_path)
    await process.start()
    answered: list[str] = []
    async with aiohttp.ClientSession() as session:
        handle = process.handle(session)
        installed = await handle.install()
        await handle.agent(installed)  # keys published, never connected: sends queue

        enough = asyncio.Event()

        async def keep_sending() -> None:
            while True:
                answered.append(await handle.send(installed.conversation_id, text="hi"))
                if len(answered) >= KILLED_AFTER:
                    enough.set()

        senders = [asyncio.create_task(keep_sending()) for _ in range(4)]
        async with asyncio.timeout(30):
            await enough.wait()
        await process.kill()
        await asyncio.gather(*senders, return_exceptions=True)
        kept = list(answered)
        await process.start()
        status = await handle.admin("GET", f"/agents/{installed.agent_id}")
        await process.stop()
    assert set(kept) <= set(status["queued"])
