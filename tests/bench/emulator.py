"""The demo emulator's own cost per message as its persisted history grows.

The emulator runs as a process with a state file (as scripts/develop runs it); a reference
agent (tests/emulator/reference_agent.py, in this process) answers every message a human
device sends it. A round is one message in and its answer out: the human device encrypts,
the relay queues and pushes it, the agent acknowledges and answers, the device decrypts
and files the answer. The emulator's CPU (/proc: user and system, all threads) and the
bytes it hands to write(2) (/proc/<pid>/io wchar) are taken over a block of BLOCK rounds
at a fresh state, then again after `messages` messages (rounds * 2) were filed.
"""

import asyncio
import os
import tempfile
import time
from pathlib import Path

import aiohttp

from tests.emulator.reference_agent import ReferenceAgent
from tests.helpers.emulator import EmulatorHandle
from tests.system.processes import EmulatorProcess

BLOCK = 100
TIMEOUT = 60.0
KIB = 1024


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _written(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


async def _rounds(handle: EmulatorHandle, agent: ReferenceAgent, conversation: str, n: int) -> None:
    """`n` rounds, one at a time; returns once the last answer is filed."""
    last = ""
    for number in range(n):
        await handle.send(conversation, text=f"message {number}")
        envelope = await agent.frame()
        agent.open(envelope)
        await agent.ack(envelope)
        last = await agent.reply(envelope, f"answer {number}")
    async with asyncio.timeout(TIMEOUT):
        while True:
            filed = await handle.admin("GET", "/events?kind=agent_sent")
            if any(item.get("message_id") == last for item in filed[-BLOCK:]):
                return
            await asyncio.sleep(0.02)


async def _block(
    process: EmulatorProcess, handle: EmulatorHandle, agent: ReferenceAgent, conversation: str
) -> tuple[float, float, float]:
    """CPU ms and KiB written by the emulator per message, and the state's size in MiB."""
    cpu, written = _cpu_seconds(process.pid), _written(process.pid)
    await _rounds(handle, agent, conversation, BLOCK)
    cpu_ms = (_cpu_seconds(process.pid) - cpu) * 1000 / (2 * BLOCK)
    kib = (_written(process.pid) - written) / KIB / (2 * BLOCK)
    directory = process.state_file.parent
    size = sum(
        path.stat().st_size
        for path in directory.iterdir()
        if path.name.startswith(process.state_file.name) and path.is_file()
    )
    return cpu_ms, kib, size / KIB / KIB


async def _run(messages: int) -> list[str]:
    lines = [
        f"emulator (a process with a state file): per message, its CPU ms and KiB written, "
        f"over {2 * BLOCK} messages ({BLOCK} in, {BLOCK} answers out)",
        "| messages filed before | CPU ms / message | KiB written / message | state MiB |",
        "|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as directory:
        process = EmulatorProcess(Path(directory))
        await process.start()
        try:
            async with aiohttp.ClientSession() as session:
                handle = process.handle(session)
                installed = await handle.install()
                agent = await handle.agent(installed)
                await agent.connect()
                conversation = installed.conversation_id
                await _rounds(handle, agent, conversation, 5)  # the session made
                started = time.perf_counter()
                filed = 10
                rows = [(filed, await _block(process, handle, agent, conversation))]
                filed += 2 * BLOCK
                while filed < messages:
                    count = min(messages - filed, 1000) // 2 or 1
                    await _rounds(handle, agent, conversation, count)
                    filed += 2 * count
                rows.append((filed, await _block(process, handle, agent, conversation)))
                await agent.close()
        finally:
            await process.stop()
    for filed, (cpu_ms, kib, size) in rows:
        lines.append(f"| {filed} | {cpu_ms:.1f} | {kib:.1f} | {size:.1f} |")
    fresh, grown = rows[0][1][0], rows[-1][1][0]
    lines.append(
        f"CPU per message after {rows[-1][0]} messages against fresh: {grown / fresh:.2f}x "
        f"(run {time.perf_counter() - started:.0f} s)"
    )
    return lines


def run(messages: int = 5000) -> list[str]:
    return asyncio.run(_run(messages))
