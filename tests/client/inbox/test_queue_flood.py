"""A relay flooding the agent with large frames cannot grow its memory (issue 12, item 4).

The gateway is the test's own (tests/helpers/hostile_relay.py): it sends 100 frames of 600 KiB of
payload (~80 MiB of JSON) as fast as the socket takes them, while the agent's pipeline is
stalled (its saves wait on a gate). The agent's queue stays within its bounds, the reader
stops reading, and TCP pushes back on the relay: it cannot even send the flood. Once the
pipeline moves again, every frame is taken (and refused: they do not decrypt).
"""

import asyncio
import logging
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.limits import MAX_QUEUED_FRAME_BYTES, MAX_QUEUED_FRAMES
from tests.helpers.client_agent import Recorder, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.hostile_relay import Flood, Hostility

pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]

FLOOD_FRAMES = 100
PAYLOAD_BYTES = 600 * 1024
FLOOD_BYTES = FLOOD_FRAMES * PAYLOAD_BYTES
MIB = 1024 * 1024

_LOGGER = logging.getLogger(__name__)


@dataclass
class GatedRecorder(Recorder):
    """Saves wait while `gate` is clear: the pipeline stalls inside its first transaction."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)

    async def save(self, document: dict[str, Any]) -> None:
        await self.gate.wait()
        await super().save(document)


def _rss() -> int:
    """This process's resident memory (Linux), for the log line only: RSS is noisy."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def _plateau(flood: Flood, quiet: float = 1.0) -> int:
    """What the relay managed to send once sending stopped progressing for `quiet` s."""
    last = -1
    while flood.sent != last and flood.sent < flood.count:
        last = flood.sent
        await asyncio.sleep(quiet)
    return flood.sent


async def test_flood_is_held_back_by_the_bounded_queue(
    hostile_emulator: EmulatorHandle, hostility: Hostility
) -> None:
    installed = await hostile_emulator.install()
    recorder = GatedRecorder()
    recorder.gate.set()
    flood = Flood(FLOOD_FRAMES, PAYLOAD_BYTES)
    hostility.flood = flood
    agent = make_agent(hostile_emulator, installed, recorder)
    agent.start()
    try:
        async with asyncio.timeout(60):
            await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
            recorder.gate.clear()  # the pipeline's next save waits
            tracemalloc.start()
            baseline, _ = tracemalloc.get_traced_memory()
            rss_before = _rss()
            flood.go.set()
            sent = await _plateau(flood)
            _, peak = tracemalloc.get_traced_memory()
            rss_grown = _rss() - rss_before
            tracemalloc.stop()
            queue = agent.inbound
            _LOGGER.warning(
                "Flood of %d MiB: relay sent %d/%d frames, queue peak %d frames / %.1f MiB, "
                "traced memory peak %.1f MiB over the baseline, RSS grown by %.1f MiB",
                FLOOD_BYTES // MIB,
                sent,
                FLOOD_FRAMES,
                queue.peak_frames,
                queue.peak_bytes / MIB,
                (peak - baseline) / MIB,
                rss_grown / MIB,
            )
            assert queue.peak_frames <= MAX_QUEUED_FRAMES
            assert queue.peak_bytes <= MAX_QUEUED_FRAME_BYTES
            # Backpressure: the relay could not push the flood into us.
            assert sent < FLOOD_FRAMES // 2
            assert peak - baseline < 48 * MIB < FLOOD_BYTES

            recorder.gate.set()  # the pipeline moves again: the rest of the flood comes in
            await wait_for(lambda: flood.sent == FLOOD_FRAMES and len(queue) == 0, within=40)
            await wait_for(lambda: len(agent.data.inbox.rejected) == FLOOD_FRAMES, within=20)
            assert queue.peak_bytes <= MAX_QUEUED_FRAME_BYTES
            assert recorder.delivered == []
    finally:
        await agent.stop()
