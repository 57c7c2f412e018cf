"""The two latencies a person feels, at a fresh store and at the cap (scripts/bench --store).

Real hass and emulator processes (tests/system's harness), one message at a time.
Incoming: the relay's frame pushed (the emulator's `delivered` record, after the write) to
the `pacerelle_message` event fired on hass's bus (its `time_fired`). Send: a
`pacerelle.send_message` action call (before the REST request) to the relay holding the
`MSG` frame (the person's inbox entry, `received_wall`, taken before it is decrypted).
Two agents in one hass: one fresh, one whose store was grown to the cap (seeded.py: the
bounds' largest), Home Assistant restarted on it; measured in alternating blocks of
BLOCK, ROUNDS times, so that a machine shared with other work weighs on both alike. Wall
clocks of one machine; the ratio cap/fresh is the store's weight on each path.
"""

import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tests.bench.system import _cpu_seconds, seed_agent
from tests.system.harness import Agent, System, running_system

WARMUP = 5
BLOCK = 2
ROUNDS = 50
EVENT_TIMEOUT = 30.0
SETTLE_SECONDS = 3.0
TARGET_RATIO = 1.5
LARGEST = "cap"


@dataclass(frozen=True)
class Felt:
    """Milliseconds per message, by path."""

    incoming: list[float] = field(default_factory=list)
    send: list[float] = field(default_factory=list)
    # hass's CPU (all threads) per message over each path's blocks, ms (clock ticks of
    # 10 ms: the mean over the blocks).
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"incoming": [], "send": []})


def run() -> list[str]:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pacerelle-felt-") as directory:
        fresh, largest = asyncio.run(_measure(Path(directory)))
    return [
        *report(fresh, largest),
        f"  (1-minute load average {load:.1f}, then {os.getloadavg()[0]:.1f}: the machine's "
        "other work is in the wall times, alike on both)",
    ]


async def _measure(directory: Path) -> tuple[Felt, Felt]:
    async with running_system(directory, pacerelle_log_level="warning") as system:
        fresh_agent = await system.add_agent("Fresh")
        large_agent = await system.add_agent("Largest")
        for agent in (fresh_agent, large_agent):
            await _incoming(system, agent, 1)
        await seed_agent(system, large_agent, LARGEST)
        await system.wait_online(fresh_agent)
        for agent in (fresh_agent, large_agent):  # warm: the first after a start
            await _incoming(system, agent, WARMUP)
            await _sends(system, agent, WARMUP)
        await asyncio.sleep(SETTLE_SECONDS)
        fresh, largest = Felt(), Felt()
        pid = system.hass_process.pid
        for _ in range(ROUNDS):
            for agent, felt in ((fresh_agent, fresh), (large_agent, largest)):
                before = _cpu_seconds(pid)
                felt.incoming.extend(await _incoming(system, agent, BLOCK))
                middle = _cpu_seconds(pid)
                felt.send.extend(await _sends(system, agent, BLOCK))
                felt.cpu["incoming"].append((middle - before) * 1000 / BLOCK)
                felt.cpu["send"].append((_cpu_seconds(pid) - middle) * 1000 / BLOCK)
    return fresh, largest


async def _incoming(system: System, agent: Agent, count: int) -> list[float]:
    """Frame pushed to event fired, ms, of `count` messages."""
    fired: dict[str, float] = {}
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        for number in range(count):
            message_id = await system.emulator.send(agent.conversation_id, text=f"felt {number}")
            event = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
            if event["data"]["message_id"] != message_id:
                raise RuntimeError("events arrived out of order")
            fired[message_id] = datetime.fromisoformat(event["time_fired"]).timestamp()
    pushed = {
        item["message_id"]: float(item["wall"])
        for item in await system.emulator.admin("GET", "/events?kind=delivered")
    }
    return [(at - pushed[message_id]) * 1000 for message_id, at in fired.items()]


async def _sends(system: System, agent: Agent, count: int) -> list[float]:
    """send_message called to the frame held by the relay, ms, of `count` sends."""
    samples: list[float] = []
    held = len(await system.emulator.inbox(agent.conversation_id))
    for number in range(count):
        called = time.time()
        data = {"config_entry_id": agent.entry_id, "text": f"felt reply {number}"}
        await system.hass.call_service("pacerelle", "send_message", data)
        held += 1
        inbox = await system.emulator.wait_inbox(agent.conversation_id, held, EVENT_TIMEOUT)
        entry = inbox[held - 1]
        if entry.get("text") != data["text"]:
            raise RuntimeError("a send arrived out of order, doubled or lost")
        samples.append((float(entry["received_wall"]) - called) * 1000)
    return samples


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(fresh: Felt, largest: Felt) -> list[str]:
    lines = [
        f"felt latency, real hass and emulator: two agents, a fresh store and the {LARGEST} state, "
        f"{ROUNDS * BLOCK} messages each way each, one at a time, in alternating blocks of "
        f"{BLOCK} (ms; target within {TARGET_RATIO:g}x):",
        "| path | fresh p50 | fresh p95 | largest p50 | largest p95 | p50 ratio | p95 ratio "
        "| hass CPU per message (mean), fresh / largest |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, name in (
        ("relay frame to event fired", "incoming"),
        ("send_message to relay", "send"),
    ):
        low, high = getattr(fresh, name), getattr(largest, name)
        p50 = (_percentile(low, 0.5), _percentile(high, 0.5))
        p95 = (_percentile(low, 0.95), _percentile(high, 0.95))
        lines.append(
            f"| {label} | {p50[0]:.1f} | {p95[0]:.1f} | {p50[1]:.1f} | {p95[1]:.1f} | "
            f"{p50[1] / p50[0]:.2f}x | {p95[1] / p95[0]:.2f}x | "
            f"{statistics.mean(fresh.cpu[name]):.1f} / "
            f"{statistics.mean(largest.cpu[name]):.1f} ms |"
        )
    return lines
