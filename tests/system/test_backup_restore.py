"""A restored, older agent state with real processes: seen, explained, healed (issue 20).

A conversation; a copy of the agent's folder `.storage/pacerelle` taken while Home
Assistant runs; more messages both ways; Home Assistant stopped, the older folder put back,
Home Assistant started: the start-up repair issue is there before any message failed; the
person's next messages fail (events, a per-device repair issue); the person's device starts
a new session (the emulator's device reset); messages flow both ways again and both issues
are gone.
"""

import asyncio
import shutil
from pathlib import Path
from typing import Any

from tests.system.harness import EVENT_TIMEOUT, Agent, System, running_system
from tests.system.home_assistant_api import HomeAssistantSocket

STALLED_RUN = 3  # client/values/decrypt_failures.py


async def _exchange(system: System, agent: Agent, text: str) -> None:
    """The person writes, Home Assistant answers with the action, the person reads it."""
    before = len(system.events())
    answered = len(await system.emulator.inbox(agent.conversation_id))
    message_id = await system.emulator.send(agent.conversation_id, text=text)
    events = await system.wait_events(before + 1, EVENT_TIMEOUT)
    assert events[-1]["message_id"] == message_id
    reply = f"re: {text}"
    await system.hass.call_service(
        "pacerelle",
        "send_message",
        {"config_entry_id": agent.entry_id, "source_message_id": message_id, "text": reply},
    )
    inbox = await system.emulator.wait_inbox(
        agent.conversation_id, answered + 1, within=EVENT_TIMEOUT
    )
    assert inbox[-1]["text"] == reply


async def _issues(socket: HomeAssistantSocket) -> dict[str, dict[str, Any]]:
    listed = (await socket.command("repairs/list_issues"))["issues"]
    return {item["issue_id"]: item for item in listed if item["domain"] == "pacerelle"}


async def _wait_issues(
    socket: HomeAssistantSocket, present: set[str], absent: set[str]
) -> dict[str, dict[str, Any]]:
    async with asyncio.timeout(EVENT_TIMEOUT):
        while True:
            issues = await _issues(socket)
            if present <= issues.keys() and not absent & issues.keys():
                return issues
            await asyncio.sleep(0.1)


async def test_an_older_store_put_back_is_reported_and_a_new_session_heals_it(
    tmp_path: Path, socket_enabled: None
) -> None:
    async with running_system(tmp_path) as system:
        agent = await system.add_agent()
        await _exchange(system, agent, "one")
        store = system.hass_process.config_dir / ".storage" / "pacerelle"
        backup = tmp_path / "backup-of-pacerelle"
        shutil.copytree(store, backup)
        await _exchange(system, agent, "two")
        await _exchange(system, agent, "three")

        await system.hass_process.stop()
        shutil.rmtree(store)
        shutil.copytree(backup, store)
        await system.hass_process.start()
        await system.hass.wait_entry_state(agent.entry_id, "loaded")
        await system.wait_online(agent)

        restored = f"store_restored_{agent.entry_id}"
        stalled = f"decryption_stalled_{agent.entry_id}_usr_demo_{agent.conversation_id}_1"
        async with system.hass.socket() as socket:
            failures = await socket.subscribe("pacerelle_decryption_failed")
            # Prevention: at start-up, before the first failure.
            issues = await _issues(socket)
            assert issues[restored]["translation_key"] == "store_restored"
            assert stalled not in issues
            assert failures.empty()

            # Detection: the person's messages do not decrypt any more.
            handed_over = len(system.events())
            for n in range(STALLED_RUN):
                await system.emulator.send(agent.conversation_id, text=f"lost {n}")
                event = await asyncio.wait_for(failures.get(), EVENT_TIMEOUT)
                assert event["data"]["sender_id"] == "usr_demo"
                assert event["data"]["reason"] == "invalid_mac"
                assert f"lost {n}" not in str(event)
            issues = await _wait_issues(socket, {restored, stalled}, set())
            assert issues[stalled]["translation_key"] == "decryption_stalled"
            assert issues[stalled]["severity"] == "error"
            assert len(system.events()) == handed_over  # nothing handed over

            # Recovery: the person's device starts a new session.
            await system.emulator.admin(
                "POST", f"/conversations/{agent.conversation_id}/devices/1/reset"
            )
            await _exchange(system, agent, "four")
            await _wait_issues(socket, set(), {restored, stalled})
            await _exchange(system, agent, "five")
            assert failures.qsize() == 0
