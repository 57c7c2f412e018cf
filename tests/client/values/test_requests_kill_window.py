"""A kill right after the write that accepts a batch: its events have already fired.

A write's rename is what a SIGKILL keeps, and it lands before the directory's fsync
returns. So the agent saves through a real encrypted store and every directory fsync is a
possible kill: what is on disk at that instant is compared with what was handed over.
Nothing may be on disk as accepted without its event (its redelivery would only be
acknowledged, and the message lost).
"""

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from custom_components.pacerelle.client.state import encrypted_file
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle

MESSAGES = 5


class DiskRecorder(Recorder):
    """Saves through a real EncryptedFile (in a thread, as the integration's store)."""

    def __init__(self, file: EncryptedFile) -> None:
        super().__init__()
        self.file = file

    async def save(self, document: dict[str, Any]) -> None:
        await super().save(document)
        await asyncio.to_thread(self.file.write, document)


async def test_no_acceptance_on_disk_without_its_event_at_a_directory_fsync(
    emulator: EmulatorHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = await emulator.install()
    file = EncryptedFile(tmp_path, "agent")
    await asyncio.to_thread(file.create, {})
    recorder = DiskRecorder(file)
    # (ids accepted on disk, ids handed over) at each directory fsync: a kill there keeps
    # the renamed document and the events fired so far.
    kill_points: list[tuple[set[str], set[str]]] = []
    real_fsync = os.fsync
    store_directory = os.stat(tmp_path)

    def fsync(fd: int) -> None:
        found = os.fstat(fd)
        is_store_directory = stat.S_ISDIR(found.st_mode) and (found.st_dev, found.st_ino) == (
            store_directory.st_dev,
            store_directory.st_ino,
        )
        if is_store_directory and file.data_path.exists():
            accepted = set(file.read().get("inbox", {}).get("accepted", {}))
            kill_points.append((accepted, {r.message_id for r in list(recorder.delivered)}))
        real_fsync(fd)

    monkeypatch.setattr(encrypted_file.os, "fsync", fsync)
    async with connected_agent(emulator, installed, recorder):
        for index in range(MESSAGES):
            await emulator.send(installed.conversation_id, text=f"message {index}")
        await wait_for(lambda: len(recorder.delivered) == MESSAGES)
        await emulator.wait_agent(installed.agent_id, lambda status: not status["queued"])

    assert any(accepted for accepted, _ in kill_points), "no kill point after an acceptance"
    for accepted, handed_over in kill_points:
        assert accepted <= handed_over, f"lost by a kill here: {sorted(accepted - handed_over)}"
