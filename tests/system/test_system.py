"""The whole system with real processes: nothing lost, nothing doubled, back online by itself.

Each test starts the emulator (`python -m tests.emulator --state ...`) and a real `hass`
in a fresh config dir, onboards it through the onboarding API, adds Pacerelle through the
config flow REST API (approval through the emulator's admin API, then the OAuth callback
URL it returns), and plays the human device through the emulator's admin API.

What Home Assistant fired is read from a file the test-only `pacerelle_event_log`
integration appends to synchronously from the event bus (see tests/system/event_log): it
survives SIGKILL, so "each message fired exactly once" is checked across a crash.

The inbox pipeline (client/inbox/pipeline.py) saves a batch as accepted before its events
fire, with nothing awaited in between: the kill, timed right after a batch's events, must
leave neither a lost nor a doubled message.
"""

import asyncio
import base64
import collections
import json
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.emulator.persistence import read_state
from tests.system.harness import EVENT_TIMEOUT, Agent, System, running_system

RECONNECT_LIMIT = 30.0
BURST = 500
KILL_AFTER_EVENTS = 150
KILL_POLL_SECONDS = 0.001
BURST_TIMEOUT = 120.0
SEND_CONCURRENCY = 8
SHORT_TOKEN_TTL = 4.0


def _ids(events: list[dict[str, Any]]) -> list[str]:
    return [event["message_id"] for event in events]


def _doubled(events: list[dict[str, Any]]) -> dict[str, int]:
    counts = collections.Counter(_ids(events))
    return {message_id: n for message_id, n in counts.items() if n > 1}


def _assert_none_lost(events: list[dict[str, Any]], sent: list[str]) -> None:
    fired = set(_ids(events))
    missing = [message_id for message_id in sent if message_id not in fired]
    assert not missing, f"{len(missing)} of {len(sent)} messages never fired: {missing[:10]}"
    assert fired <= set(sent), f"events for messages never sent: {fired - set(sent)}"


def _assert_each_once(events: list[dict[str, Any]], sent: list[str]) -> None:
    _assert_none_lost(events, sent)
    doubled = _doubled(events)
    assert not doubled, f"{len(doubled)} messages fired more than once: {doubled}"


async def _send_many(system: System, agent: Agent, texts: list[str]) -> list[str]:
    """Send from the human device, several requests at a time; ids in completion order."""
    limit = asyncio.Semaphore(SEND_CONCURRENCY)
    sent: list[str] = []

    async def one(text: str) -> None:
        async with limit:
            sent.append(await system.emulator.send(agent.conversation_id, text=text))

    await asyncio.gather(*(one(text) for text in texts))
    return sent


async def test_a_message_reaches_home_assistant_as_an_event(system: System) -> None:
    agent = await system.add_agent()
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        message_id = await system.emulator.send(agent.conversation_id, text="Garage door?")
        event = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
    data = event["data"]
    assert data["message_id"] == message_id
    assert data["text"] == "Garage door?"
    assert data["entry_id"] == agent.entry_id
    assert data["agent_id"] == agent.agent_id
    assert data["conversation_id"] == agent.conversation_id
    assert data["sender_id"] == "usr_demo"
    assert _ids(system.events()) == [message_id]
    [installation] = await system.emulator.admin("GET", "/installations")
    assert installation["connected"]
    assert not installation["revoked"]


async def test_home_assistant_answers_with_the_send_message_action(system: System) -> None:
    agent = await system.add_agent()
    message_id = await system.emulator.send(agent.conversation_id, text="Lights?")
    await system.wait_events(1, EVENT_TIMEOUT)
    data = {
        "config_entry_id": agent.entry_id,
        "source_message_id": message_id,
        "text": "All lights are off.",
    }
    await system.hass.call_service("pacerelle", "send_message", data)
    [received] = await system.emulator.wait_inbox(agent.conversation_id, 1, within=EVENT_TIMEOUT)
    assert received["text"] == "All lights are off."
    assert received["encrypted"]
    assert received["history"] == "valid"
    # And back again, on the ratchet both sides just moved.
    thanks = await system.emulator.send(agent.conversation_id, text="Thanks")
    events = await system.wait_events(2, EVENT_TIMEOUT)
    assert _ids(events) == [message_id, thanks]


async def test_sigkill_in_a_burst_fires_each_message_exactly_once(system: System) -> None:
    agent = await system.add_agent()
    sending = asyncio.create_task(_send_many(system, agent, [f"burst {n}" for n in range(BURST)]))
    # Killed as soon as a batch's events are out: while the runtime is still saving it.
    await system.wait_events(KILL_AFTER_EVENTS, BURST_TIMEOUT, poll=KILL_POLL_SECONDS)
    await system.hass_process.kill()
    fired_before_kill = len(system.events())
    sent = await sending
    assert fired_before_kill < BURST, "the burst ended before the kill: nothing was tested"

    await system.hass_process.start()
    await system.wait_events(BURST, BURST_TIMEOUT)
    # Everything acknowledged: nothing left for a later redelivery.
    await system.emulator.wait_agent(
        agent.agent_id, lambda status: not status["queued"], within=EVENT_TIMEOUT
    )
    events = system.events()
    _assert_none_lost(events, sent)
    doubled = _doubled(events)
    assert not doubled, f"{len(doubled)} messages fired twice after SIGKILL: {sorted(doubled)}"


async def test_emulator_restart_while_connected(system: System) -> None:
    agent = await system.add_agent()
    first = await system.emulator.send(agent.conversation_id, text="before")
    await system.wait_events(1, EVENT_TIMEOUT)

    await system.emulator_process.kill()
    await system.emulator_process.start()
    started = time.monotonic()
    # Sent as soon as Pacerelle is back: queued until the agent reconnects.
    queued = [
        await system.emulator.send(agent.conversation_id, text=f"queued {n}") for n in range(5)
    ]
    await system.wait_online(agent, within=RECONNECT_LIMIT)
    reconnected = time.monotonic() - started
    assert reconnected < RECONNECT_LIMIT
    await system.wait_events(6, EVENT_TIMEOUT)
    _assert_each_once(system.events(), [first, *queued])
    await system.emulator.wait_agent(
        agent.agent_id, lambda status: not status["queued"], within=EVENT_TIMEOUT
    )


async def test_runtime_tokens_expire_and_are_renewed(tmp_path: Path, socket_enabled: None) -> None:
    async with running_system(tmp_path, runtime_token_ttl=SHORT_TOKEN_TTL) as system:
        agent = await system.add_agent()
        sent = []
        # Three token lifetimes, a message every 0.4 s: renewals must not lose or double any.
        deadline = time.monotonic() + 3 * SHORT_TOKEN_TTL
        while time.monotonic() < deadline:
            sent.append(await system.emulator.send(agent.conversation_id, text="tick"))
            await asyncio.sleep(0.4)
        # Every token expires at once: the gateway closes with 4401, a new token follows.
        await system.emulator.faults(expire_runtime_tokens=True)
        sent.append(await system.emulator.send(agent.conversation_id, text="after expiry"))
        await system.wait_online(agent)
        await system.wait_events(len(sent), EVENT_TIMEOUT)
        _assert_each_once(system.events(), sent)
        connections = await system.emulator.admin("GET", "/events?kind=agent_connected")
        assert len(connections) >= 3, "the agent never reconnected with a renewed token"
        [entry] = await system.hass.entries()
        assert entry["state"] == "loaded"


async def test_revocation_asks_for_reauthentication(system: System) -> None:
    agent = await system.add_agent()
    await system.emulator.admin("POST", f"/installations/{agent.agent_id}/revoke")
    await _wait_reauth(system, agent)

    # After a restart the revoked installation cannot set up: the same reauth request.
    await system.hass_process.restart()
    await system.hass.wait_entry_state(agent.entry_id, "setup_error")
    await _wait_reauth(system, agent)


async def _wait_reauth(system: System, agent: Agent) -> None:
    issue_id = f"config_entry_reauth_pacerelle_{agent.entry_id}"
    async with system.hass.socket() as socket, asyncio.timeout(EVENT_TIMEOUT):
        while True:
            flows = await socket.command("config_entries/flow/progress")
            issues = (await socket.command("repairs/list_issues"))["issues"]
            reauth = [
                flow
                for flow in flows
                if flow["handler"] == "pacerelle"
                and flow["context"].get("source") == "reauth"
                and flow["context"].get("entry_id") == agent.entry_id
            ]
            if reauth and any(issue["issue_id"] == issue_id for issue in issues):
                assert reauth[0]["step_id"] == "reauth_confirm"
                return
            await asyncio.sleep(0.1)


async def test_a_corrupted_store_is_a_repair_issue(system: System) -> None:
    agent = await system.add_agent()
    await system.emulator.send(agent.conversation_id, text="hello")
    await system.wait_events(1, EVENT_TIMEOUT)
    identity = (await system.emulator.admin("GET", f"/agents/{agent.agent_id}"))["identity_key"]
    await system.hass_process.stop()

    store = system.hass_process.config_dir / ".storage" / "pacerelle" / f"{agent.agent_id}.db"
    # One byte of the encrypted session row flipped, as a disk fault would (SQLite intact).
    with sqlite3.connect(store) as connection:
        rkey, value = connection.execute(
            "SELECT rkey, value FROM records WHERE tbl = 'sessions'"
        ).fetchone()
        flipped = value[:30] + bytes([value[30] ^ 0xFF]) + value[31:]
        connection.execute("UPDATE records SET value = ? WHERE rkey = ?", (flipped, rkey))
    connection.close()
    damaged = store.read_bytes()
    key = store.with_suffix(".key").read_bytes()

    await system.hass_process.start()
    entry = await system.hass.wait_entry_state(agent.entry_id, "setup_error")
    assert entry["error_reason_translation_key"] == "store_unreadable"
    async with system.hass.socket() as socket:
        issues = (await socket.command("repairs/list_issues"))["issues"]
    [issue] = [item for item in issues if item["issue_id"] == f"store_{agent.entry_id}"]
    assert issue["domain"] == "pacerelle"
    assert issue["translation_key"] == "store_undecryptable"
    # Never a new identity over an unreadable store: files untouched, nothing published.
    assert store.read_bytes() == damaged
    assert store.with_suffix(".key").read_bytes() == key
    status = await system.emulator.admin("GET", f"/agents/{agent.agent_id}")
    assert status["identity_key"] == identity
    assert not status["connected"]


async def test_frames_that_break_the_protocol_leave_the_agent_intact(system: System) -> None:
    agent = await system.add_agent()
    identity = (await system.emulator.admin("GET", f"/agents/{agent.agent_id}"))["identity_key"]
    first = await system.emulator.send(agent.conversation_id, text="first")
    await system.wait_events(1, EVENT_TIMEOUT)
    envelope, second = await _queued_envelope(system, agent)
    await system.wait_events(2, EVENT_TIMEOUT)

    garbage = base64.b64encode(secrets.token_bytes(300)).decode()
    too_big_payload = base64.b64encode(secrets.token_bytes(800 * 1024)).decode()
    frames = [
        "not JSON at all",
        "[1, 2, 3]",
        json.dumps({"type": "MSG"}),
        json.dumps({**envelope, "payload_b64": "!!! not base64"}),
        json.dumps({**envelope, "id": "forged-1", "payload_b64": garbage}),
        json.dumps(envelope),  # replayed: already handed over and acknowledged
        json.dumps({**envelope, "payload_b64": garbage}),  # same id, other content
        json.dumps({**envelope, "id": "forged-2", "payload_b64": too_big_payload}),
        json.dumps({"type": "SOMETHING_NEW", "data": "x" * 1000}),
    ]
    result = await system.emulator.faults(inject_frames=frames, agent_id=agent.agent_id)
    assert result["injected"] == len(frames)
    # Over the client's WebSocket limit: the connection drops, the agent comes back.
    await system.emulator.faults(inject_frames=["x" * (5 * 1024 * 1024)], agent_id=agent.agent_id)
    await system.wait_online(agent)

    third = await system.emulator.send(agent.conversation_id, text="third")
    await system.wait_events(3, EVENT_TIMEOUT)
    await asyncio.sleep(1)  # room for a wrongly accepted frame to show up as an event
    events = system.events()
    assert _ids(events) == [first, second, third]
    assert [event["text"] for event in events] == ["first", "second", "third"]
    assert system.hass_process.running
    [entry] = await system.hass.entries()
    assert entry["state"] == "loaded"
    status = await system.emulator.wait_agent(
        agent.agent_id, lambda status: status["connected"] and not status["queued"]
    )
    assert status["identity_key"] == identity


async def _queued_envelope(system: System, agent: Agent) -> tuple[dict[str, Any], str]:
    """A message exactly as the relay delivers it, read from the emulator's state file
    while the agent is kept offline; then the agent is let back in and receives it."""
    await system.emulator.faults(gateway_status=503, drop_connections=True)
    await system.wait_offline(agent)
    message_id = await system.emulator.send(agent.conversation_id, text="second")
    state = read_state(system.emulator_process.state_file)
    [envelope] = [item for item in state["queues"][agent.agent_id] if item["id"] == message_id]
    await system.emulator.faults(reset=True)
    await system.wait_online(agent)
    return envelope, message_id
