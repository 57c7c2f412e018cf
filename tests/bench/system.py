"""System figures: a real `hass` and the emulator as processes (tests/system's harness).

- latency: the emulator's admin send (the human device encrypts, the relay pushes) to the
  `pacerelle_message` event reaching a WebSocket subscriber of Home Assistant, one message
  at a time. With it, the CPU time each process spent per message (/proc: all threads,
  hass's executor included; steadier than wall time on a shared machine), and the median
  of each stage of the inbox pipeline as it logs them at debug (client/inbox/stage_clock.py):
  lock, decrypt, save (of which build: bounds and document), events, ack.
- burst: 1,000 messages sent by the human device as fast as the emulator takes them (8
  requests in flight), first send to the 1,000th event; then 1,000 queued while the agent
  is kept offline (gateway fault), from the first of their events to the last: the
  integration's own pace (the backoff before its reconnection is shown apart).
- outbox: 100 sends made through `pacerelle.send_message` while the agent is kept offline
  (queued, client/values/send_queue.py), then the gateway let in: from the agent's reconnection
  (the emulator sees it connected, polled every 20 ms) to the 100th in the person's inbox.
- reconnect: the relay drops the connection (a clean close, then a dead TCP link without
  a close frame), then the emulator is killed and restarted; until the agent is online
  again (polled every 20 ms). The three come one after the other, and the runtime's
  backoff (1 s base, with jitter) grows with each until a connection has lasted 60 s: the
  later ones include a longer wait.
- uncertain sends: sends made around a drop of the connection (the relay closes it, the TCP
  link cut, the token expired), how many end `uncertain` and how many of those the person
  got anyway (uncertain_sends.py).
- memory: hass's RSS (/proc) after onboarding, with one agent, and with ten agents (each
  online, each with a session from one message).
With a state (`--state busy`, tests/helpers/store_states.py), the latency alone, of an agent whose
store was grown to that state after its first message (seeded.py), Home Assistant
restarted on it.
"""

import asyncio
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.bench import uncertain_sends
from tests.bench.seeded import Held, held, seed
from tests.system.harness import Agent, System, running_system

LATENCY_WARMUP = 5
LATENCY_SAMPLES = 100
BURST = 1000
BURST_CONCURRENCY = 8
BURST_TIMEOUT = 300.0
EVENT_TIMEOUT = 30.0
EXTRA_AGENTS = 9
SETTLE_SECONDS = 3.0
MIB = 1024 * 1024
TARGET_P95_MS = 50.0
TARGET_SEEDED_P95_MS = 10.0  # at the busy state (issue 27)
TARGET_BURST_S = 20.0
TARGET_PER_AGENT_MIB = 10.0
OUTBOX = 100


SENT_TO_FIRED = "sent to fired"
PIPELINE_LOGGER = "custom_components.pacerelle.client.inbox.pipeline"
STAGE_LINE = re.compile(r"Stage times \(ms\) of a batch of 1: (.*)$", re.MULTILINE)


@dataclass
class Figures:
    latencies: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)
    cpu_ms: dict[str, float] = field(default_factory=dict)  # per message, by process
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after
    burst_seconds: float = 0.0
    burst_send_seconds: float = 0.0
    queued_wait_seconds: float = 0.0
    queued_burst_seconds: float = 0.0
    outbox_reconnect_seconds: float = 0.0
    outbox_flush_seconds: float = 0.0
    outbox_queue_seconds: float = 0.0
    reconnects: dict[str, float] = field(default_factory=dict)
    uncertain: dict[str, uncertain_sends.Drop] = field(default_factory=dict)
    rss: dict[str, int] = field(default_factory=dict)
    # The state the store was grown to, what it held then and after the measurement.
    seeded: tuple[str, Held, Held] | None = None


def run(*, latency_only: bool = False, state: str | None = None) -> list[str]:
    """Run the measurements; returns the lines to print. `latency_only`: one agent, the
    latency figures alone (a minute; for comparing changes); `state`: of an agent whose
    store holds that state."""
    with tempfile.TemporaryDirectory(prefix="pacerelle-bench-") as directory:
        if latency_only or state is not None:
            return _latency_report(asyncio.run(_measure_latency(Path(directory), state)))
        figures = asyncio.run(_measure(Path(directory)))
    return _report(figures)


async def _measure_latency(directory: Path, state: str | None = None) -> Figures:
    figures = Figures()
    async with running_system(directory, pacerelle_log_level="warning") as system:
        agent = await system.add_agent("Agent 1")
        await _one_message(system, agent)
        seeded = None if state is None else await seed_agent(system, agent, state)
        await asyncio.sleep(SETTLE_SECONDS)
        load = os.getloadavg()[0]
        figures.latencies, figures.stages, figures.cpu_ms = await _measured_latencies(system, agent)
        figures.load = (load, os.getloadavg()[0])
        if state is not None and seeded is not None:
            await system.hass_process.stop()
            after = await asyncio.to_thread(held, system.hass_process.config_dir, agent.agent_id)
            figures.seeded = (state, seeded, after)
    return figures


async def _measure(directory: Path) -> Figures:
    figures = Figures()
    # Quiet logs: the figures are about the integration, not about formatting debug lines.
    async with running_system(directory, pacerelle_log_level="warning") as system:
        await asyncio.sleep(SETTLE_SECONDS)
        figures.rss["no agent"] = system.hass_process.rss_bytes()
        agent = await system.add_agent("Agent 1")
        await _one_message(system, agent)
        await asyncio.sleep(SETTLE_SECONDS)
        figures.rss["one agent"] = system.hass_process.rss_bytes()
        for number in range(EXTRA_AGENTS):
            await _one_message(system, await system.add_agent(f"Agent {number + 2}"))
        await asyncio.sleep(SETTLE_SECONDS)
        figures.rss["ten agents"] = system.hass_process.rss_bytes()

        # Before the bursts: the queued burst's outage leaves every agent backing off.
        figures.reconnects = await _reconnects(system, agent)
        load = os.getloadavg()[0]
        figures.latencies, figures.stages, figures.cpu_ms = await _measured_latencies(system, agent)
        figures.load = (load, os.getloadavg()[0])
        figures.burst_send_seconds, figures.burst_seconds = await _burst(system, agent)
        figures.queued_wait_seconds, figures.queued_burst_seconds = await _queued_burst(
            system, agent
        )
        await system.wait_online(agent, within=BURST_TIMEOUT)  # after a burst of 1,000
        (
            figures.outbox_queue_seconds,
            figures.outbox_reconnect_seconds,
            figures.outbox_flush_seconds,
        ) = await _outbox(system, agent)
        figures.uncertain = await uncertain_sends.measure(system, agent)
    return figures


async def seed_agent(system: System, agent: Agent, state: str) -> Held:
    """The agent's store grown to `state` while Home Assistant is stopped; back online."""
    await system.hass_process.stop()
    seeded = await asyncio.to_thread(seed, system.hass_process.config_dir, agent.agent_id, state)
    await system.hass_process.start()
    await system.hass.wait_entry_state(agent.entry_id, "loaded")
    await system.wait_online(agent)
    await _one_message(system, agent)
    return seeded


async def _one_message(system: System, agent: Agent) -> None:
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        await system.emulator.send(agent.conversation_id, text="hello")
        await asyncio.wait_for(events.get(), EVENT_TIMEOUT)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a process, all its threads (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _measured_latencies(
    system: System, agent: Agent
) -> tuple[list[float], dict[str, list[float]], dict[str, float]]:
    """The latencies, with where they went (_split, then the pipeline's stages) and each
    process's CPU per message."""
    await system.hass.call_service("logger", "set_level", {PIPELINE_LOGGER: "debug"})
    log = system.hass_process.log_path
    offset = log.stat().st_size
    processes = {"hass": system.hass_process.pid, "emulator": system.emulator_process.pid}
    before = {name: _cpu_seconds(pid) for name, pid in processes.items()}
    marks: list[Marks] = []
    latencies = await _latencies(system, agent, marks)
    count = LATENCY_WARMUP + LATENCY_SAMPLES
    cpu_ms = {
        name: (_cpu_seconds(pid) - before[name]) * 1000 / count for name, pid in processes.items()
    }
    await system.hass.call_service("logger", "set_level", {PIPELINE_LOGGER: "warning"})
    with log.open() as file:
        file.seek(offset)
        lines = STAGE_LINE.findall(file.read())
    stages = await _split(system, marks)
    for line in lines[LATENCY_WARMUP:]:
        for pair in line.split():
            name, milliseconds = pair.split("=")
            stages.setdefault(name, []).append(float(milliseconds))
    return latencies, stages, cpu_ms


@dataclass(frozen=True)
class Marks:
    """Wall times of one message: sent (the admin call began), the event fired in hass,
    the event received by the WebSocket subscriber."""

    message_id: str
    sent: float
    fired: float
    received: float


async def _latencies(system: System, agent: Agent, marks: list[Marks] | None = None) -> list[float]:
    samples: list[float] = []
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        for number in range(LATENCY_WARMUP + LATENCY_SAMPLES):
            sent = time.time()
            start = time.perf_counter()
            message_id = await system.emulator.send(agent.conversation_id, text=f"ping {number}")
            event = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
            elapsed = time.perf_counter() - start
            if event["data"]["message_id"] != message_id:
                raise RuntimeError("events arrived out of order")
            if number >= LATENCY_WARMUP:
                samples.append(elapsed)
                if marks is not None:
                    fired = datetime.fromisoformat(event["time_fired"]).timestamp()
                    marks.append(Marks(message_id, sent, fired, sent + elapsed))
    return samples


async def _split(system: System, marks: list[Marks]) -> dict[str, list[float]]:
    """Each message's latency in three (ms): the emulator (send to frame pushed, its
    `delivered` record), hass (pushed to event fired), the event to the subscriber."""
    pushed = {
        item["message_id"]: float(item["wall"])
        for item in await system.emulator.admin("GET", "/events?kind=delivered")
    }
    split: dict[str, list[float]] = {"emulator": [], "hass": [], "to subscriber": []}
    split[SENT_TO_FIRED] = [(mark.fired - mark.sent) * 1000 for mark in marks]
    for mark in marks:
        if mark.message_id not in pushed:
            continue  # beyond the emulator's event memory
        split["emulator"].append((pushed[mark.message_id] - mark.sent) * 1000)
        split["hass"].append((mark.fired - pushed[mark.message_id]) * 1000)
        split["to subscriber"].append((mark.received - mark.fired) * 1000)
    return split


async def _send_burst(system: System, agent: Agent) -> None:
    limit = asyncio.Semaphore(BURST_CONCURRENCY)

    async def send(number: int) -> None:
        async with limit:
            await system.emulator.send(agent.conversation_id, text=f"burst {number}")

    await asyncio.gather(*(send(number) for number in range(BURST)))


async def _burst(system: System, agent: Agent) -> tuple[float, float]:
    """(seconds to send, seconds from the first send to the last event)."""
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        start = time.perf_counter()
        await _send_burst(system, agent)
        sent = time.perf_counter() - start
        await _events(events, BURST)
        return sent, time.perf_counter() - start


async def _queued_burst(system: System, agent: Agent) -> tuple[float, float]:
    """BURST messages queued while the agent is kept offline, then let in: (seconds until
    the first event, which is mostly backoff; seconds from the first event to the last)."""
    await system.emulator.faults(gateway_status=503, drop_connections=True)
    await system.wait_offline(agent)
    await _send_burst(system, agent)
    async with system.hass.socket() as socket:
        events = await socket.subscribe("pacerelle_message")
        start = time.perf_counter()
        await system.emulator.faults(reset=True)
        await _events(events, 1)
        first = time.perf_counter()
        await _events(events, BURST - 1)
        return first - start, time.perf_counter() - first


async def _outbox(system: System, agent: Agent) -> tuple[float, float, float]:
    """OUTBOX sends queued while offline, then let out: (seconds the OUTBOX action calls
    took, seconds from letting the gateway in to the reconnection, seconds from the
    reconnection to the last one delivered)."""
    before = len(await system.emulator.inbox(agent.conversation_id))
    await system.emulator.faults(gateway_status=503, drop_connections=True)
    await system.wait_offline(agent)
    queueing = time.perf_counter()
    for number in range(OUTBOX):
        data = {"config_entry_id": agent.entry_id, "text": f"queued {number}"}
        await system.hass.call_service("pacerelle", "send_message", data)
    start = time.perf_counter()
    queued = start - queueing
    await system.emulator.faults(reset=True)
    await system.wait_online(agent, within=BURST_TIMEOUT)
    connected = time.perf_counter()
    inbox = await system.emulator.wait_inbox(
        agent.conversation_id, before + OUTBOX, within=BURST_TIMEOUT
    )
    delivered = time.perf_counter()
    texts = [message["text"] for message in inbox[before:]]
    if texts != [f"queued {number}" for number in range(OUTBOX)]:
        raise RuntimeError("queued messages arrived out of order, doubled or lost")
    return queued, connected - start, delivered - connected


async def _events(events: asyncio.Queue[dict[str, Any]], count: int) -> None:
    async with asyncio.timeout(BURST_TIMEOUT):
        for _ in range(count):
            await events.get()


async def _reconnects(system: System, agent: Agent) -> dict[str, float]:
    results: dict[str, float] = {}
    for name, mode in (("relay closes", "close"), ("TCP link cut", "abort")):
        await system.emulator.faults(drop_connections=mode)
        start = time.perf_counter()
        await system.wait_online(agent)
        results[name] = time.perf_counter() - start
        await asyncio.sleep(1)
    await system.emulator_process.kill()
    await system.emulator_process.start()
    start = time.perf_counter()
    await system.wait_online(agent)
    results["emulator killed and restarted (from serving again)"] = time.perf_counter() - start
    return results


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _latency_report(figures: Figures) -> list[str]:
    latencies_ms = [seconds * 1000 for seconds in figures.latencies]
    p50, p95, p99 = (_percentile(latencies_ms, q) for q in (0.50, 0.95, 0.99))
    target = TARGET_P95_MS if figures.seeded is None else TARGET_SEEDED_P95_MS
    lines = ["system: real hass and emulator processes on 127.0.0.1"]
    if figures.seeded is not None:
        state, *held = figures.seeded
        lines += [
            f"store {when}: {h.sessions} sessions, {h.pending} pending, {h.history} history "
            f"entries, {h.group_keys} group keys, {h.queued} queued sends, "
            f"{h.database_bytes / 1024:.0f} KiB on disk"
            for when, h in zip((f"seeded to the {state} state", "after the run"), held, strict=True)
        ]
    return [
        *lines,
        f"event latency, {len(latencies_ms)} messages one at a time: p50 {p50:.1f} ms, "
        f"p95 {p95:.1f} ms, p99 {p99:.1f} ms, max {max(latencies_ms):.1f} ms "
        f"(target p95 < {target:g} ms)",
        *_fired_line(figures.stages),
        "  CPU per message: "
        + ", ".join(f"{name} {ms:.1f} ms" for name, ms in figures.cpu_ms.items())
        + f" (1-minute load average {figures.load[0]:.1f}, then {figures.load[1]:.1f})",
        "  median ms per message, from wall clocks: emulator (send to frame pushed), hass (to "
        "event fired), to subscriber; hass's inbox stages (lock, decrypt, save of which build, "
        "events, ack): "
        + (
            " ".join(
                f"{name} {statistics.median(values):.2f}"
                for name, values in figures.stages.items()
                if name != SENT_TO_FIRED
            )
            or "none logged"
        ),
    ]


def _fired_line(stages: dict[str, list[float]]) -> list[str]:
    """Percentiles of the send to `time_fired` (no WebSocket subscriber in it) and of its
    part in hass (the frame pushed by the relay to the event fired)."""
    parts = [
        f"{label} p50 {_percentile(stages[name], 0.50):.1f}, "
        f"p95 {_percentile(stages[name], 0.95):.1f}, p99 {_percentile(stages[name], 0.99):.1f}"
        for label, name in (("sent to event fired:", SENT_TO_FIRED), ("of which hass:", "hass"))
        if stages.get(name)
    ]
    return ["  " + "; ".join(parts) + " ms"] if parts else []


def _report(figures: Figures) -> list[str]:
    rate = BURST / figures.burst_seconds
    one, ten = figures.rss["one agent"], figures.rss["ten agents"]
    per_agent = (ten - one) / EXTRA_AGENTS / MIB
    lines = [
        *_latency_report(figures),
        f"burst of {BURST}: all events in {figures.burst_seconds:.1f} s ({rate:.0f} messages/s; "
        f"the emulator took {figures.burst_send_seconds:.1f} s to send them) "
        f"(target < {TARGET_BURST_S:g} s)",
        f"burst of {BURST} queued while offline: first to last event "
        f"{figures.queued_burst_seconds:.1f} s ({BURST / figures.queued_burst_seconds:.0f} "
        f"messages/s), after {figures.queued_wait_seconds:.1f} s of reconnection backoff",
        f"outbox: {OUTBOX} sends queued while offline "
        f"({figures.outbox_queue_seconds * 1000 / OUTBOX:.1f} ms per action call), "
        f"reconnection to the last delivered {figures.outbox_flush_seconds * 1000:.0f} ms "
        f"(both polled every 20 ms; after {figures.outbox_reconnect_seconds:.1f} s of "
        "reconnection backoff)",
    ]
    lines += [
        f"reconnect, {name}: {seconds * 1000:.0f} ms (drop {number} in a row)"
        for number, (name, seconds) in enumerate(figures.reconnects.items(), 1)
    ]
    lines += uncertain_sends.report(figures.uncertain)
    lines += [f"hass RSS, {name}: {size / MIB:.1f} MiB" for name, size in figures.rss.items()]
    lines.append(
        f"memory per extra agent: {per_agent:.2f} MiB (target < {TARGET_PER_AGENT_MIB:g} MiB)"
    )
    return lines
