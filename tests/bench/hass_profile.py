"""Where a message's time goes in hass: cProfile of the latency loop (scripts/bench --profile).

A real hass and the emulator (tests/system's harness) with hass run under cProfile; one
agent, a warm-up, then `PROFILE_SAMPLES` messages one at a time as in system.py's latency.
cProfile (Python 3.12 and later) sees every thread, the executor's included, so the call
counts are exact; the times of threads interleave and are only indicative. Printed: the
integration's functions (and the few library ones that matter: JSON, AES-GCM, fsync) by
their own CPU time, with calls per message, so the dump is read as "per message".
"""

import asyncio
import pstats
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from tests.bench.system import EVENT_TIMEOUT, LATENCY_WARMUP, SETTLE_SECONDS
from tests.system.harness import running_system
from tests.system.processes import HomeAssistantProcess

PROFILE_SAMPLES = 200
TOP = 45
INTERESTING = ("pacerelle", "json", "aead", "fsync", "executor", "posix")


type Start = Callable[[HomeAssistantProcess], Coroutine[Any, Any, None]]


def _profiled_start(profile_path: Path) -> Start:
    """HomeAssistantProcess.start with hass under cProfile (written when hass stops)."""

    async def start(process: HomeAssistantProcess) -> None:
        await process.spawn(
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(profile_path),
            "-m",
            "homeassistant",
            "--config",
            str(process.config_dir),
            "--skip-pip",
            cwd=process.config_dir,
            env=process.env,
        )
        await process.wait_served(f"{process.base_url}/api/onboarding")

    return start


def run(samples: int = PROFILE_SAMPLES) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="pacerelle-profile-") as directory:
        path = Path(directory) / "hass.prof"
        asyncio.run(_measure(Path(directory), path, samples))
        return _report(path, samples)


async def _measure(directory: Path, path: Path, samples: int) -> None:
    original = HomeAssistantProcess.start
    HomeAssistantProcess.start = _profiled_start(path)  # type: ignore[method-assign,assignment]
    try:
        async with running_system(directory, pacerelle_log_level="warning") as system:
            agent = await system.add_agent("Agent 1")
            await asyncio.sleep(SETTLE_SECONDS)
            async with system.hass.socket() as socket:
                events = await socket.subscribe("pacerelle_message")
                for number in range(LATENCY_WARMUP + samples):
                    await system.emulator.send(agent.conversation_id, text=f"ping {number}")
                    await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
    finally:
        HomeAssistantProcess.start = original  # type: ignore[method-assign]


def _report(path: Path, samples: int) -> list[str]:
    stats = pstats.Stats(str(path))
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{filename}:{line}({name})"
        if not any(word in where for word in INTERESTING):
            continue
        rows.append((own, cumulative, calls, where))
    rows.sort(reverse=True)
    lines = [f"hass under cProfile, {samples} messages one at a time (whole run, startup too)"]
    lines.append(f"{'own s':>8} {'cum s':>8} {'calls/msg':>10}  function")
    for own, cumulative, calls, where in rows[:TOP]:
        short = where.split("custom_components/")[-1].split("site-packages/")[-1]
        lines.append(f"{own:8.3f} {cumulative:8.3f} {calls / samples:10.2f}  {short}")
    return lines
