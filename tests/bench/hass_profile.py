"""Where a message's time goes in hass: cProfile of the latency loop (scripts/bench --profile).

A real hass and the emulator (tests/system's harness), hass run by profiled_hass.py; one
agent, a warm-up, then `PROFILE_SAMPLES` messages one at a time as in system.py's latency,
profiled alone (not hass's start). With a state (`--profile --state busy`), the agent's
store is grown to it first (system.py's `seed_agent`).
cProfile (Python 3.12 and later) sees every thread, the executor's included, so the call
counts are exact; the times (wall, with the profiler's overhead) of threads interleave and
are only indicative. Printed: the functions by their own time, per message.
"""

import asyncio
import os
import pstats
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from tests.bench.system import EVENT_TIMEOUT, LATENCY_WARMUP, SETTLE_SECONDS, seed_agent
from tests.system.harness import running_system
from tests.system.processes import HomeAssistantProcess

PROFILE_SAMPLES = 200
SIGNAL_SECONDS = 0.2
WRAPPER = Path(__file__).with_name("profiled_hass.py")
TOP = 45


type Start = Callable[[HomeAssistantProcess], Coroutine[Any, Any, None]]


def _profiled_start(profile_path: Path) -> Start:
    """HomeAssistantProcess.start with hass under profiled_hass.py (SIGUSR1/SIGUSR2)."""

    async def start(process: HomeAssistantProcess) -> None:
        await process.spawn(
            sys.executable,
            str(WRAPPER),
            str(profile_path),
            "--config",
            str(process.config_dir),
            "--skip-pip",
            cwd=process.config_dir,
            env=process.env,
        )
        await process.wait_served(f"{process.base_url}/api/onboarding")

    return start


KEEP_VARIABLE = "PACERELLE_PROFILE_KEEP"


def run(samples: int = PROFILE_SAMPLES, state: str | None = None) -> list[str]:
    """The report; the raw profile is copied to $PACERELLE_PROFILE_KEEP when it is set
    (for pstats: callers, sort orders)."""
    with tempfile.TemporaryDirectory(prefix="pacerelle-profile-") as directory:
        path = Path(directory) / "hass.prof"
        asyncio.run(_measure(Path(directory), path, samples, state))
        if keep := os.environ.get(KEEP_VARIABLE):
            shutil.copyfile(path, keep)
        return _report(path, samples)


async def _measure(directory: Path, path: Path, samples: int, state: str | None) -> None:
    original = HomeAssistantProcess.start
    HomeAssistantProcess.start = _profiled_start(path)  # type: ignore[method-assign,assignment]
    try:
        async with running_system(directory, pacerelle_log_level="warning") as system:
            agent = await system.add_agent("Agent 1")
            if state is not None:
                await system.emulator.send(agent.conversation_id, text="the first")
                await system.wait_events(1, EVENT_TIMEOUT)
                await seed_agent(system, agent, state)
            await asyncio.sleep(SETTLE_SECONDS)
            async with system.hass.socket() as socket:
                events = await socket.subscribe("pacerelle_message")
                for number in range(LATENCY_WARMUP + samples):
                    if number == LATENCY_WARMUP:
                        os.kill(system.hass_process.pid, signal.SIGUSR1)
                        await asyncio.sleep(SIGNAL_SECONDS)
                    await system.emulator.send(agent.conversation_id, text=f"ping {number}")
                    await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
                os.kill(system.hass_process.pid, signal.SIGUSR2)
                async with asyncio.timeout(EVENT_TIMEOUT):
                    while not path.exists():  # noqa: ASYNC110 - written by hass
                        await asyncio.sleep(SIGNAL_SECONDS)
    finally:
        HomeAssistantProcess.start = original  # type: ignore[method-assign]


def _report(path: Path, samples: int) -> list[str]:
    stats = pstats.Stats(str(path))
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{filename}:{line}({name})"
        short = where.split("custom_components/")[-1].split("site-packages/")[-1]
        rows.append((own, cumulative, calls, short))
    rows.sort(reverse=True)
    lines = [
        f"hass under cProfile, {samples} messages one at a time (only them), per message:",
        f"{'own ms':>8} {'cum ms':>8} {'calls':>8}  function",
    ]
    lines += [
        f"{own * 1000 / samples:8.3f} {cumulative * 1000 / samples:8.3f} "
        f"{calls / samples:8.2f}  {short}"
        for own, cumulative, calls, short in rows[:TOP]
    ]
    return lines
