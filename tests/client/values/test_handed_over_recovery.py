"""A request handed over whose acceptance was never saved is not handed over again.

The pipeline saves a request as received, keeps its mark and fires its event, then saves
it as accepted (client/inbox/pipeline.py). When that last save fails (the disk is full,
or Home Assistant is killed right then), the store on disk still says received. The relay,
never acknowledged, redelivers after the restart: the mark on disk says the event fired,
so the stored copy is accepted without a second event (into the history, acknowledged).
A real store in Home Assistant's config dir, the running emulator as the relay; only the
failing write is made to fail (a full disk cannot be made for real here).
"""

import asyncio
import base64
import errno
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.agent.agent import Agent as Agent_
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.media import media_agent
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes


def _ids(agent: Agent) -> list[str]:
    return [event.data["message_id"] for event in agent.events]


async def test_a_failed_acceptance_save_after_the_event_fires_nothing_again(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await start_agent(hass, emulator)
    first = await human_writes(emulator, agent, text="before")
    # Its acceptance is saved after its event: acknowledged means saved.
    await emulator.wait_agent(agent.installed.agent_id, lambda status: not status["queued"])
    commit = RecordStore.commit
    failed: list[str] = []

    def full_disk(self: RecordStore, extra: Any, data: AgentData | None) -> int:
        before = self.data.inbox.accepted if self.data is not None else {}
        if data is not None and not failed and set(data.inbox.accepted) - set(before):
            failed.extend(set(data.inbox.accepted) - set(before))
            raise OSError(errno.ENOSPC, "No space left on device")
        return commit(self, extra, data)

    monkeypatch.setattr(RecordStore, "commit", full_disk)
    command = await human_writes(emulator, agent, text="open the garage")
    await wait_until(lambda: bool(failed))  # the acceptance comes after the event
    assert failed == [command["message_id"]]
    queued = await emulator.admin("GET", f"/agents/{agent.installed.agent_id}")
    assert queued["queued"] == [command["message_id"]]  # unacknowledged: redelivered

    # Home Assistant restarts the entry: the store is read from disk, the relay redelivers.
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await hass.async_block_till_done()
    await emulator.wait_agent(agent.installed.agent_id, lambda status: not status["queued"])
    after = await human_writes(emulator, agent, text="after")
    assert _ids(agent) == [first["message_id"], command["message_id"], after["message_id"]]
    data = agent.runtime.agent.data
    assert command["message_id"] in data.inbox.accepted
    assert command["message_id"] not in data.inbox.received
    history = [handled.request.message_id for handled in data.history.requests]
    assert command["message_id"] in history


async def test_a_stop_before_the_mark_hands_the_stored_copy_over_once(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side: saved as received, stopped before its mark and event (its file still
    downloading), the stored copy is handed over after the restart, once."""
    agent = await media_agent(hass, emulator, tmp_path)
    downloads: list[str] = []

    async def hangs(self: Agent_, message_id: str, index: int) -> bytes:
        downloads.append(f"{message_id}/{index}")
        await asyncio.Event().wait()  # never set: the entry is stopped first
        raise AssertionError

    monkeypatch.setattr(Agent_, "download", hangs)
    attachments = [{"name": "a.txt", "data_b64": base64.b64encode(b"a").decode()}]
    message_id = await emulator.send(agent.conversation_id, text="look", attachments=attachments)
    await wait_until(lambda: bool(downloads))
    assert message_id in agent.runtime.agent.data.inbox.received
    assert _ids(agent) == []
    monkeypatch.undo()
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await hass.async_block_till_done()
    await wait_until(lambda: message_id in _ids(agent))
    await emulator.wait_agent(agent.installed.agent_id, lambda status: not status["queued"])
    assert _ids(agent) == [message_id]
