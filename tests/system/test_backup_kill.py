"""A SIGKILL while Home Assistant makes a backup, with messages arriving: nothing lost or
doubled, the same identity, and the next backup works.

Between the backup platform's pre- and post-backup calls every store is paused (backup.py:
WAL checkpointed, commits held). A random (incompressible) file keeps that window open;
the kill comes after the tar appeared and after messages sent since reached the agent (the
relay's `delivered` records), and the tar left is shorter than that file: killed before
the post-backup call. Those messages had no event yet (their commits were held), except
perhaps the one being handed over, accepted at the restart by its mark without a second
event (store/handed_over.py). After the restart: no repair, the identity the relay knows,
every message fired once, nothing unacknowledged, and a new backup whose store loads with
that identity and the last message.
"""

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.backup_files import store_files_of
from tests.system.harness import EVENT_TIMEOUT, Agent, System, running_system
from tests.system.home_assistant_api import HomeAssistantSocket, wait_for

PADDING_BYTES = 64 * 1024 * 1024  # ~1-3 s of gzip here
IN_WINDOW = 3  # messages sent and delivered to the agent inside the paused window
SEND_GAP = 0.02
WINDOW_TIMEOUT = 20.0
POLL = 0.005
BACKUP_TIMEOUT = 30.0
LOCAL_AGENT = "backup.local"
FINAL = ("completed", "failed")


@dataclass
class _Sender:
    """The person writes every SEND_GAP s until stopped: (when the send began, its id)."""

    system: System
    agent: Agent
    sent: list[tuple[float, str]] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            message_id = await self.system.emulator.send(
                self.agent.conversation_id, text=f"during the backup {len(self.sent)}"
            )
            self.sent.append((began, message_id))
            await asyncio.sleep(SEND_GAP)

    def since(self, moment: float) -> list[str]:
        return [message_id for began, message_id in self.sent if began >= moment]

    @property
    def ids(self) -> list[str]:
        return [message_id for _, message_id in self.sent]


async def _generate(socket: HomeAssistantSocket, name: str) -> None:
    await socket.command(
        "backup/generate", agent_ids=[LOCAL_AGENT], include_database=False, name=name
    )


async def _delivered(system: System) -> set[str]:
    records = await system.emulator.admin("GET", "/events?kind=delivered")
    return {record["message_id"] for record in records}


async def _inside_the_window(
    system: System, sender: _Sender, backups: Path
) -> tuple[Path, set[str]]:
    """The backup's tar once it exists and IN_WINDOW messages sent since were delivered;
    those messages."""
    async with asyncio.timeout(WINDOW_TIMEOUT):
        while True:
            if tars := list(backups.glob("*.tar")):
                break
            await asyncio.sleep(POLL)
        opened = time.monotonic()
        while True:
            held = set(sender.since(opened)) & await _delivered(system)
            if len(held) >= IN_WINDOW:
                [tar] = tars
                return tar, held
            await asyncio.sleep(POLL)


async def _wait_fired(system: System, ids: list[str]) -> None:
    await wait_for(
        lambda: set(ids) <= {event["message_id"] for event in system.events()},
        EVENT_TIMEOUT,
        "every message's event",
    )


async def _pacerelle_issues(socket: HomeAssistantSocket) -> list[dict[str, Any]]:
    issues = (await socket.command("repairs/list_issues"))["issues"]
    return [issue for issue in issues if issue["domain"] == "pacerelle"]


async def _completed_backup(socket: HomeAssistantSocket, name: str) -> None:
    events = await socket.subscribe_to("backup/subscribe_events")
    await _generate(socket, name)
    async with asyncio.timeout(BACKUP_TIMEOUT):
        while True:
            event = await events.get()
            # Upload progress events have no state; the last one says how it ended.
            if event.get("manager_state") == "create_backup" and event.get("state") in FINAL:
                assert event["state"] == "completed", event
                return


async def test_sigkill_during_a_backup_loses_nothing(tmp_path: Path, socket_enabled: None) -> None:
    async with running_system(tmp_path / "system", integrations=("backup",)) as system:
        agent = await system.add_agent()
        first = await system.emulator.send(agent.conversation_id, text="before the backup")
        await _wait_fired(system, [first])
        status = await system.emulator.admin("GET", f"/agents/{agent.agent_id}")
        identity = status["identity_key"]
        padding = system.hass_process.config_dir / "padding.bin"
        await asyncio.to_thread(lambda: padding.write_bytes(os.urandom(PADDING_BYTES)))

        killed, sent = await _killed_during_a_backup(system, agent)
        sent.insert(0, first)

        await system.hass_process.start()
        await system.hass.wait_entry_state(agent.entry_id, "loaded")
        await system.wait_online(agent)
        await _wait_fired(system, sent)
        status = await system.emulator.wait_agent(
            agent.agent_id, lambda status: not status["queued"], within=EVENT_TIMEOUT
        )
        assert status["identity_key"] == identity
        fired = [event["message_id"] for event in system.events()]
        assert sorted(fired) == sorted(sent), "a message was lost or fired twice"

        padding.unlink()
        async with system.hass.socket() as socket:
            assert await _pacerelle_issues(socket) == []
            await _completed_backup(socket, "after the restart")
        [backup] = [path for path in killed.parent.glob("*.tar") if path != killed]
        data = await asyncio.to_thread(_data_in, backup, agent.agent_id, tmp_path / "restored")
        assert data.signal.prekeys.bundle_json()["identity_key"] == identity
        assert sent[-1] in data.inbox.pending
        # The stores were resumed after the backup: the next message is handed over.
        last = await system.emulator.send(agent.conversation_id, text="after the backup")
        await _wait_fired(system, [last])


async def _killed_during_a_backup(system: System, agent: Agent) -> tuple[Path, list[str]]:
    """Home Assistant killed inside a backup's paused window, the person writing all along;
    the backup's tar as the kill left it, and the messages sent."""
    sender = _Sender(system, agent)
    sending = asyncio.create_task(sender.run())
    try:
        await wait_for(lambda: len(sender.sent) >= IN_WINDOW, EVENT_TIMEOUT, "messages flowing")
        async with system.hass.socket() as socket:
            await _generate(socket, "killed")
            tar, held = await _inside_the_window(
                system, sender, system.hass_process.config_dir / "backups"
            )
            await system.hass_process.kill()
        fired_at_kill = {event["message_id"] for event in system.events()}
    finally:
        sender.stop.set()
        with contextlib.suppress(Exception):
            await sending
    # Before the post-backup call: the tar was not complete.
    assert tar.stat().st_size < PADDING_BYTES, "the backup was written whole before the kill"
    assert not held & fired_at_kill, "a message was handed over while the store was paused"
    return tar, sender.ids


def _data_in(backup: Path, agent_id: str, folder: Path) -> AgentData:
    """The agent's data as the backup's store loads it."""
    store = store_files_of(backup, agent_id, folder)
    try:
        _, data = store.load(migrate)
    finally:
        store.close()
    assert data is not None
    return data
