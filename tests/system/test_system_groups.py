"""A family group under a SIGKILL, with real processes: nothing lost, nothing doubled.

Three members write to the group in a burst (group messages, sealed with their sender
keys, which the agent fetches from /agent/group-keys); Home Assistant is killed right after
a batch's events, restarted, and every message must have fired exactly once, with its
sender and `group: true`. Then the agent's answer to the group reaches every member.
"""

import asyncio
import collections

from tests.system.harness import EVENT_TIMEOUT, System

MEMBERS = ("usr_demo", "usr_ana", "usr_ben")
BURST = 300
KILL_AFTER_EVENTS = 100
KILL_POLL_SECONDS = 0.001
BURST_TIMEOUT = 120.0
SEND_CONCURRENCY = 8


async def test_sigkill_in_a_group_burst_fires_each_message_once(system: System) -> None:
    agent = await system.add_agent()
    created = await system.emulator.admin(
        "POST",
        "/groups",
        {"name": "Family", "members": list(MEMBERS), "agent_ids": [agent.agent_id]},
    )
    group_id = created["conversation_id"]
    limit = asyncio.Semaphore(SEND_CONCURRENCY)
    sent: dict[str, str] = {}  # message id -> sender

    async def one(n: int) -> None:
        user_id = MEMBERS[n % len(MEMBERS)]
        async with limit:
            body = {"text": f"burst {n}", "user_id": user_id}
            answer = await system.emulator.admin("POST", f"/conversations/{group_id}/send", body)
        sent[answer["message_id"]] = user_id

    sending = asyncio.gather(*(one(n) for n in range(BURST)))
    await system.wait_events(KILL_AFTER_EVENTS, BURST_TIMEOUT, poll=KILL_POLL_SECONDS)
    await system.hass_process.kill()
    fired_before_kill = len(system.events())
    await sending
    assert fired_before_kill < BURST, "the burst ended before the kill: nothing was tested"

    await system.hass_process.start()
    try:
        await system.wait_events(BURST, BURST_TIMEOUT)
    except AssertionError as err:
        fired = {event["message_id"] for event in system.events()}
        missing = sorted(set(sent) - fired)
        raise AssertionError(f"missing message ids {missing}; {err}") from None
    await system.emulator.wait_agent(
        agent.agent_id, lambda status: not status["queued"], within=EVENT_TIMEOUT
    )
    events = system.events()
    counts = collections.Counter(event["message_id"] for event in events)
    assert set(counts) == set(sent), "lost or invented messages"
    assert set(counts.values()) == {1}, "messages fired twice after SIGKILL"
    for event in events:
        assert event["group"] is True
        assert event["conversation_id"] == group_id
        assert event["sender_id"] == sent[event["message_id"]]

    last = events[-1]["message_id"]
    await system.hass.call_service(
        "pacerelle", "send_message", {"text": "All read", "source_message_id": last}
    )
    entries = await system.emulator.wait_inbox(group_id, len(MEMBERS), within=EVENT_TIMEOUT)
    assert sorted((e["user_id"], e["text"]) for e in entries) == sorted(
        (member, "All read") for member in MEMBERS
    )
