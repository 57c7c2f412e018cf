"""The durable outbox with real processes: sends made offline survive a SIGKILL of Home
Assistant and reach the person once, in order, after the restart; expired ones never do.

The emulator's gateway refuses upgrades (a fault) while automations send; Home Assistant
is killed, restarted, then the gateway comes back. `pacerelle_message_status` events are
read from the test-only event log (tests/system/event_log), which survives the kill.
"""

import asyncio
from typing import Any

from tests.system.harness import EVENT_TIMEOUT, System
from tests.system.home_assistant_api import read_event_log

DELIVERY_TIMEOUT = 60.0  # a restart, then the agent's reconnection backoff
QUEUED = 10
SHORT_EXPIRY = 2  # seconds: these expire while Home Assistant is down
STATUS_LOG = "pacerelle_status.jsonl"


def statuses(system: System) -> list[dict[str, Any]]:
    return read_event_log(system.hass_process.config_dir / STATUS_LOG)


async def wait_statuses(system: System, status: str, count: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(DELIVERY_TIMEOUT):
        while True:  # a file another process writes: polled
            found = [e for e in statuses(system) if e["status"] == status]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.05)


async def test_sends_queued_offline_survive_a_sigkill_and_arrive_once_in_order(
    system: System,
) -> None:
    agent = await system.add_agent()
    await system.emulator.send(agent.conversation_id, text="Hello")  # a session to answer on
    await system.wait_events(1, EVENT_TIMEOUT)

    await system.emulator.faults(gateway_status=503, drop_connections="abort")
    await system.wait_offline(agent)
    for number in range(QUEUED):
        data = {"config_entry_id": agent.entry_id, "text": f"Alert {number}"}
        await system.hass.call_service("pacerelle", "send_message", data)
        if number % 5 == 0:  # stale news, interleaved: must never arrive
            stale = {**data, "text": f"Stale {number}", "expire_after": SHORT_EXPIRY}
            await system.hass.call_service("pacerelle", "send_message", stale)
    queued = await wait_statuses(system, "queued", QUEUED + 2)

    await system.hass_process.kill()
    await asyncio.sleep(SHORT_EXPIRY)  # the stale ones expire while nothing runs
    await system.hass_process.start()
    await system.emulator.faults(reset=True)

    inbox = await system.emulator.wait_inbox(agent.conversation_id, QUEUED, within=DELIVERY_TIMEOUT)
    sent = await wait_statuses(system, "sent", QUEUED)
    await asyncio.sleep(1.0)  # anything doubled or late would land by now
    inbox = await system.emulator.inbox(agent.conversation_id)
    assert [m["text"] for m in inbox] == [f"Alert {n}" for n in range(QUEUED)]
    assert all(m["history"] == "valid" for m in inbox)
    expired = [e for e in statuses(system) if e["status"] == "expired"]
    delivered = {e["message_id"] for e in sent}
    stale_ids = [e["message_id"] for e in queued if e["message_id"] not in delivered]
    assert sorted(e["message_id"] for e in expired) == sorted(stale_ids)
    assert len(stale_ids) == 2
    assert [e["message_id"] for e in sent] == [m["message_id"] for m in inbox]
