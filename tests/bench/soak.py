"""scripts/bench --soak: a busy household's year (or --months N) in minutes, one row a month.

One real Home Assistant with two agents against the emulator (soak_system.py), both clocks
moved forward while the connections are down:
- every simulated hour: that hour's messages (soak_traffic.py, scaled by --scale), each in
  fired before the hour ends; then the relay drops both connections (a clean close; at
  04:00 a dead link without a close frame) and the hour passes on both clocks (the
  emulator's first, then Home Assistant's: every timer of the hour runs, the backoff's
  included, and the agents reconnect with new tokens, publishing prekeys, rotating them
  when due);
- runtime tokens of TOKEN_TTL seconds; at 06:00 and 18:00 Home Assistant's clock moves past
  their renewal point while connected, and each agent renews on its own schedule;
- at 12:00 the relay refuses the runtime token requests (503) for a few attempts;
- a backup every day at 03:00 (older ones deleted), a restart of Home Assistant every week
  (SIGTERM), one member of each group leaving or coming back every month.
Each month's row: messages in and out, lost and doubled each way, Home Assistant's CPU per
message, the event latency (p50/p95), the stores on disk (records, WAL), its RSS, asyncio
tasks, open descriptors, open repairs and the largest table (rows, of either agent).
"""

import asyncio
import collections
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench import soak_figures
from tests.bench.soak_system import TOKEN_TTL, Household, change_members, running_household
from tests.bench.soak_traffic import Ledger, Traffic
from tests.system.harness import Agent

HOURS_A_DAY = 24
DAYS_A_MONTH = 30
DAYS_A_WEEK = 7
RESTART_EVERY_DAYS = DAYS_A_WEEK
BACKUP_HOUR = 3
ABORT_HOUR = 4
REFUSAL_HOUR = 12
REFUSED_ATTEMPTS = 3
REFUSED_WAIT = 0.02
RENEWAL_HOURS = {6, 18}
RENEWAL_NUDGE = TOKEN_TTL * 0.9  # past RENEW_FRACTION (80 %) of a token's life
HOUR = 3600.0
NUDGE_SECONDS = 2.0  # more simulated time when an agent is still backing off
NUDGE_AFTER = 0.015  # real seconds of waiting for the agents before a nudge
HOUR_TIMEOUT = 60.0
OUTBOX_TIMEOUT = 60.0
BACKUP_TIMEOUT = 120.0
TOKEN_PATH = "/agent-connect/runtime-token"
LOCAL_BACKUP = "backup.local"
TRACE_FRAMES = 6
COUNT_OBJECTS = False  # the live objects by type at each month's end, and their growth
TRACE_FROM_MONTH = 0  # tracing costs: a later month sees what grows once the caps are full


@dataclass
class MonthRow:
    month: int
    messages_in: int
    messages_out: int
    lost: tuple[int, int]  # in, out
    doubled: tuple[int, int]
    cpu_ms: float
    p50_ms: float
    p95_ms: float
    sample: soak_figures.Sample
    wall_seconds: float


@dataclass
class Soak:
    """A run: its rows, and the samples taken at each week's end (before its restart)."""

    hours_a_step: int = 1  # simulated hours between two drops of the relay (a divisor of 24)
    rows: list[MonthRow] = field(default_factory=list)
    start: soak_figures.Sample | None = None  # after the introductions
    week_ends: list[soak_figures.Sample] = field(default_factory=list)
    day_ones: list[soak_figures.Sample] = field(default_factory=list)  # a day after each start
    refused: int = 0
    renewals: int = 0
    nudges: int = 0
    grown_sites: list[list[Any]] = field(default_factory=list)
    traced: list[float] = field(default_factory=list)  # MiB tracemalloc saw, month by month


def run(months: int = 12, scale: float = 1.0, *, trace: bool = False) -> list[str]:
    """Prints the rows as the months pass; returns the summary lines."""
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="pacerelle-soak-") as directory:
        soak = asyncio.run(simulate(Path(directory), months, scale, trace=trace, report=_print_row))
    return summary(soak)


def _print_row(row: MonthRow) -> None:
    print(format_row(row), flush=True)


HEADER = (
    "month   in  out lost dbl  cpu/msg  p50/p95 ms  records+WAL KiB   RSS MiB tasks fds "
    "repairs largest table (rows)  wall s"
)


def format_row(row: MonthRow) -> str:
    s = row.sample
    table, rows = s.largest_table
    return (
        f"{row.month:5d} {row.messages_in:5d} {row.messages_out:4d} "
        f"{row.lost[0]}/{row.lost[1]} {row.doubled[0]}/{row.doubled[1]} "
        f"{row.cpu_ms:6.1f} ms {row.p50_ms:5.1f}/{row.p95_ms:5.1f} "
        f"{s.records_bytes / 1024:8.0f}+{s.wal_bytes / 1024:<6.0f} "
        f"{s.rss / soak_figures.MIB:7.1f} {s.tasks:5d} {s.fds:3d} {len(s.repairs):7d} "
        f"{table} ({rows})  {row.wall_seconds:6.1f}"
    )


async def simulate(
    directory: Path,
    months: int,
    scale: float,
    *,
    trace: bool = False,
    report: Any = None,
    hours_a_step: int = 1,
) -> Soak:
    """The household's `months`; `report` gets each month's row as it is made;
    `hours_a_step`: the hours that pass between two drops of the relay (1 in the bench)."""
    if HOURS_A_DAY % hours_a_step:
        raise ValueError("the hours of a step must divide a day")
    soak = Soak(hours_a_step)
    async with running_household(directory) as household:
        ledger = Ledger(household.hass_process.config_dir / "soak_events.jsonl")
        traffic = Traffic(household, ledger, scale)
        await traffic.introductions(HOUR_TIMEOUT)
        soak.start = await soak_figures.sample(household)
        for month in range(months):
            if trace and month == TRACE_FROM_MONTH:
                await household.probe("tracemalloc_start", {"frames": TRACE_FRAMES})
            started, cpu = time.monotonic(), household.cpu_seconds()
            sent_in, sent_out = len(ledger.inbound), len(ledger.outbound)
            for group in household.groups:
                await change_members(household, group, month)
            for day in range(month * DAYS_A_MONTH, (month + 1) * DAYS_A_MONTH):
                await _day(household, traffic, soak, day, trace=trace)
            row = await _month_row(household, ledger, month + 1, (sent_in, sent_out), cpu, started)
            soak.rows.append(row)
            if trace and month >= TRACE_FROM_MONTH:
                soak.grown_sites = row.sample.probe.get("grown_sites", [])
                traced = row.sample.probe.get("traced_bytes", 0) / soak_figures.MIB
                soak.traced.append(round(traced, 1))
            if report is not None:
                report(row)
    return soak


async def _day(
    household: Household, traffic: Traffic, soak: Soak, day: int, *, trace: bool
) -> None:
    if day and RESTART_EVERY_DAYS and day % RESTART_EVERY_DAYS == 0:
        soak.week_ends.append(await soak_figures.sample(household))
        await household.restart()
        if trace and day >= TRACE_FROM_MONTH * DAYS_A_MONTH:
            await household.probe("tracemalloc_start", {"frames": TRACE_FRAMES})
    for hour in range(0, HOURS_A_DAY, soak.hours_a_step):
        hours = range(hour, hour + soak.hours_a_step)
        if BACKUP_HOUR in hours:
            await backup(household)
        await traffic.hours(hours, HOUR_TIMEOUT)
        if REFUSAL_HOUR in hours:
            soak.refused += await _refused_reconnection(household, soak)
        if RENEWAL_HOURS & set(hours):
            soak.renewals += await _renewal(household)
        await _pass(household, soak, HOUR * len(hours), abort=ABORT_HOUR in hours)
    if day % DAYS_A_WEEK == 0:
        soak.day_ones.append(await soak_figures.sample(household))


async def _pass(household: Household, soak: Soak, seconds: float, *, abort: bool) -> None:
    emulator = household.system.emulator
    await emulator.faults(drop_connections="abort" if abort else "close")
    await household.advance(seconds)
    await _online(household, soak)


async def _online(household: Household, soak: Soak) -> None:
    """Until both agents are connected with their bundles published; while one is still
    backing off, Home Assistant's clock moves NUDGE_SECONDS on."""
    async with asyncio.timeout(HOUR_TIMEOUT):
        while True:
            waited = time.monotonic()
            while time.monotonic() - waited < NUDGE_AFTER:
                if all([await _is_online(household, agent) for agent in household.agents]):
                    return
                await asyncio.sleep(0.005)
            soak.nudges += 1
            await household.nudge(NUDGE_SECONDS)


async def _is_online(household: Household, agent: Agent) -> bool:
    status = await household.system.emulator.admin("GET", f"/agents/{agent.agent_id}")
    return bool(status["connected"] and status["bundle_published"])


async def _renewal(household: Household) -> int:
    """Home Assistant's clock moved past the renewal point of the agents' tokens while they
    are connected (well within the link's receive timeout): each renews on its own
    schedule, a new token and a new connection. How many renewed."""
    emulator = household.system.emulator
    since = time.time()
    await household.nudge(RENEWAL_NUDGE)
    agents = {agent.agent_id for agent in household.agents}
    async with asyncio.timeout(HOUR_TIMEOUT):
        while True:
            issued = await emulator.admin("GET", "/events?kind=runtime_token_issued")
            renewed = {item["agent_id"] for item in issued if item["wall"] > since}
            if agents <= renewed:
                break
            await asyncio.sleep(0.005)
    for agent in household.agents:
        await household.system.wait_online(agent)
    return len(agents)


async def _refused_reconnection(household: Household, soak: Soak) -> int:
    """The relay refuses token requests for REFUSED_ATTEMPTS nudges; how many it refused."""
    emulator = household.system.emulator
    await emulator.faults(route_status={TOKEN_PATH: 503})
    await emulator.faults(drop_connections="close")
    for _ in range(REFUSED_ATTEMPTS):
        await household.nudge(NUDGE_SECONDS * 4)
        soak.nudges += 1
        await asyncio.sleep(REFUSED_WAIT)  # for the attempt the nudge let go
    await emulator.faults(reset=True)
    await _online(household, soak)
    return REFUSED_ATTEMPTS


async def backup(household: Household) -> None:
    """A backup through Home Assistant's backup integration; older ones deleted."""
    async with household.hass.socket() as socket:
        events = await socket.subscribe_to("backup/subscribe_events")
        await socket.command("backup/generate", agent_ids=[LOCAL_BACKUP], include_database=False)
        async with asyncio.timeout(BACKUP_TIMEOUT):
            while True:
                event = await events.get()
                if event.get("manager_state") == "create_backup" and event.get("state") in (
                    "completed",
                    "failed",
                ):
                    if event["state"] != "completed":
                        raise RuntimeError(f"the daily backup failed: {event}")
                    break
        info = await socket.command("backup/info")
        backups = sorted(info["backups"], key=lambda item: item["date"])
        for old in backups[:-1]:
            await socket.command("backup/delete", backup_id=old["backup_id"])


async def _month_row(
    household: Household,
    ledger: Ledger,
    month: int,
    before: tuple[int, int],
    cpu: float,
    started: float,
) -> MonthRow:
    inbound = list(ledger.inbound.items())[before[0] :]
    outbound = list(ledger.outbound.items())[before[1] :]
    lost_out, doubled_out = await _outbound_checked(household, ledger, outbound)
    ledger.read_events()
    lost_in = sum(1 for message_id, _ in inbound if min(ledger.counts(message_id)) == 0)
    doubled_in = sum(1 for message_id, _ in inbound if ledger.doubled(message_id))
    latencies = sorted(
        (ledger.fired_at[message_id] - sent.wall) * 1000
        for message_id, sent in inbound
        if message_id in ledger.fired_at
    )
    total = len(inbound) + len(outbound)
    cpu_ms = (household.cpu_seconds() - cpu) * 1000 / max(total, 1)
    return MonthRow(
        month=month,
        messages_in=len(inbound),
        messages_out=len(outbound),
        lost=(lost_in, lost_out),
        doubled=(doubled_in, doubled_out),
        cpu_ms=cpu_ms,
        p50_ms=_percentile(latencies, 0.5),
        p95_ms=_percentile(latencies, 0.95),
        sample=await soak_figures.sample(household, objects=COUNT_OBJECTS),
        wall_seconds=time.monotonic() - started,
    )


async def _outbound_checked(
    household: Household, ledger: Ledger, sent: list[tuple[str, tuple[str, bool]]]
) -> tuple[int, int]:
    """(lost, doubled) of the texts sent: each in its conversation's inbox, never twice on
    one device. Waits up to OUTBOX_TIMEOUT for the last ones."""
    emulator = household.system.emulator
    conversations = {conversation for _, (conversation, _) in sent}
    deadline = time.monotonic() + OUTBOX_TIMEOUT
    while True:
        seen: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
        for conversation in conversations:
            for entry in await emulator.inbox(conversation):
                text = entry.get("text")
                if isinstance(text, str):
                    who = str(entry.get("user_id", ""))
                    seen[(conversation, text, who, str(entry.get("device_id")))] += 1
        texts = {(conversation, text) for conversation, text, _, _ in seen}
        lost = sum(1 for text, (conversation, _) in sent if (conversation, text) not in texts)
        if not lost or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    mine = {text for text, _ in sent}
    doubled = len({text for (_, text, _, _), count in seen.items() if count > 1 and text in mine})
    return lost, doubled


def _percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return 0.0
    return samples[min(len(samples) - 1, int(fraction * len(samples)))]


def summary(soak: Soak) -> list[str]:
    lines = [
        f"token refusal windows: {soak.refused // REFUSED_ATTEMPTS} (each {REFUSED_ATTEMPTS} "
        f"nudges long); backoff nudges: {soak.nudges}; token renewals on schedule: "
        f"{soak.renewals}",
    ]
    if soak.start is not None and soak.rows:
        end = soak.rows[-1].sample
        lines.append(
            f"bus listeners and dispatcher targets: {soak.start.listeners} after the "
            f"introductions, {end.listeners} at the end; threads {soak.start.probe['threads']}, "
            f"then {end.probe['threads']}"
        )
    if soak.week_ends:
        lines.append(
            "RSS at each week's end (MiB): "
            + " ".join(f"{sample.rss / soak_figures.MIB:.1f}" for sample in soak.week_ends)
        )
    if soak.day_ones:
        lines.append(
            "RSS a day after each start (MiB): "
            + " ".join(f"{sample.rss / soak_figures.MIB:.1f}" for sample in soak.day_ones)
        )
    if soak.rows:
        last = soak.rows[-1].sample.probe
        lines.append(f"tasks by coroutine at the end: {last.get('top_tasks')}")
        lines.append(f"repairs open at the end: {last.get('repairs')}")
        lines.append(
            f"mean wall per month: {statistics.mean(r.wall_seconds for r in soak.rows):.0f} s"
        )
    if soak.traced:
        lines.append(f"traced by tracemalloc at each month's end (MiB): {soak.traced}")
    if soak.rows and "grown_types" in soak.rows[-1].sample.probe:
        lines.append(
            f"live objects grown in the last month: {soak.rows[-1].sample.probe['grown_types']}"
        )
    for site, size, count in soak.grown_sites:
        lines.append(f"  grown in the last month: {size / 1024:8.1f} KiB {count:+6d}  {site}")
    return lines
