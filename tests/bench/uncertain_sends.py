"""Uncertain sends per drop (scripts/bench --system): of the sends made around a drop of
the gateway connection, how many end `uncertain`, and how many of those the person got.

Per kind of drop (the relay closes it, code 1012; the TCP link cut without a close frame;
the runtime token expired, code 4401), SENDS `pacerelle.send_message` calls one after the
other, the drop made right after the DROP_AFTER-th returned (its frame written). A send
written on the connection that dropped, less than outbox/confirmations.py's window
before it, is `uncertain` (never sent again); one refused by the closed connection waits
in the queue and is `sent` on the next. The statuses are the `pacerelle_message_status`
events; a marker sent after the reconnection, once the person has it and its status has
arrived, closes the count (the bus keeps their order). Reached: the uncertain ones in the
person's inbox (the emulator's); doubled: a message id twice there.
"""

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tests.system.harness import Agent, System

SENDS = 10
DROP_AFTER = 5
STATUS_TIMEOUT = 60.0
DROPS: dict[str, dict[str, Any]] = {
    "relay closes (1012)": {"drop_connections": "close"},
    "TCP link cut": {"drop_connections": "abort"},
    "token expired (4401)": {"expire_runtime_tokens": True},
}
FINAL = {"sent", "uncertain", "failed", "expired"}


@dataclass(frozen=True)
class Drop:
    sends: int
    uncertain: int
    reached: int  # of the uncertain, in the person's inbox
    doubled: int


async def measure(system: System, agent: Agent) -> dict[str, Drop]:
    results: dict[str, Drop] = {}
    for name, fault in DROPS.items():
        await system.wait_online(agent, within=STATUS_TIMEOUT)
        results[name] = await _one_drop(system, agent, fault, name)
    return results


async def _one_drop(system: System, agent: Agent, fault: dict[str, Any], name: str) -> Drop:
    async with system.hass.socket() as socket:
        statuses = await socket.subscribe("pacerelle_message_status")
        ids = []
        for number in range(SENDS):
            ids.append(await _send(system, agent, f"{name}: send {number}"))
            if number + 1 == DROP_AFTER:
                await system.emulator.faults(**fault)
        await system.wait_online(agent, within=STATUS_TIMEOUT)
        marker_id = await _send(system, agent, f"{name}: marker")
        last: dict[str, str] = {}
        async with asyncio.timeout(STATUS_TIMEOUT):
            while last.get(marker_id) not in FINAL:
                event = await statuses.get()
                last[event["data"]["message_id"]] = event["data"]["status"]
    inbox = await system.emulator.inbox(agent.conversation_id)
    held = Counter(entry["message_id"] for entry in inbox)
    ours = {mid: last.get(mid) for mid in ids}
    if any(status not in FINAL for status in ours.values()):
        raise RuntimeError(f"{name}: sends without a final status: {ours}")
    uncertain = [mid for mid, status in ours.items() if status == "uncertain"]
    lost = [mid for mid, status in ours.items() if status == "sent" and mid not in held]
    if lost:
        raise RuntimeError(f"{name}: {len(lost)} send(s) reported sent never reached the person")
    return Drop(
        sends=SENDS,
        uncertain=len(uncertain),
        reached=sum(1 for mid in uncertain if mid in held),
        doubled=sum(1 for mid in ours if held[mid] > 1),
    )


async def _send(system: System, agent: Agent, text: str) -> str:
    """A `pacerelle.send_message` call; the message id it returned."""
    data = {"config_entry_id": agent.entry_id, "text": text}
    answer = await system.hass.rest(
        "POST", "/api/services/pacerelle/send_message?return_response", data
    )
    return str(answer["service_response"]["message_id"])


def report(drops: dict[str, Drop]) -> list[str]:
    lines = [
        f"uncertain sends per drop: {SENDS} sends one after the other, the connection dropped "
        f"right after the {DROP_AFTER}th:",
        "| drop | uncertain | share | of which the person got | doubled |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {d.uncertain} of {d.sends} | {d.uncertain / d.sends:.0%} | "
        f"{d.reached} of {d.uncertain} | {d.doubled} |"
        for name, d in drops.items()
    ]
    return lines
