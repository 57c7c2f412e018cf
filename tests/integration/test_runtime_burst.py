"""Bursts through Home Assistant: nothing lost or doubled, and the event loop stays responsive."""

import asyncio
import contextlib
import time
from collections import Counter

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

MAX_LOOP_LAG = 0.050
PROBE_INTERVAL = 0.005


class LagProbe:
    """How late a short sleep wakes up: the longest time the loop could not run.

    Both the wall-clock lag and the event-loop thread's own CPU time over the same gap are
    kept: the first also counts other processes taking the CPU away from the test (this
    machine is shared), the second only work done on the loop itself.
    """

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_cpu = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            before, before_cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(PROBE_INTERVAL)
            self.worst = max(self.worst, time.perf_counter() - before - PROBE_INTERVAL)
            self.worst_cpu = max(self.worst_cpu, time.thread_time() - before_cpu)


async def _send_many(emulator: EmulatorHandle, conversation_id: str, count: int) -> list[str]:
    return [await emulator.send(conversation_id, text=f"n{index}") for index in range(count)]


async def test_burst_of_500_with_a_drop_fires_each_event_once(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    async with connected_entry(hass, entry) as runtime:
        first = await _send_many(emulator, installed.conversation_id, 250)
        await emulator.faults(drop_connections="abort")  # mid-burst: some unacknowledged
        second = await _send_many(emulator, installed.conversation_id, 250)
        await wait_until(lambda: len(events) >= 500, within=60)
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=30)
        await asyncio.sleep(0.2)
        counts = Counter(event.data["message_id"] for event in events)
        assert set(counts) == {*first, *second}
        assert set(counts.values()) == {1}
        assert [event.data["text"] for event in events[:3]] == ["n0", "n1", "n2"]
        assert runtime.status.pending == 500


async def test_loop_lag_while_200_messages_arrive(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    # Queue them while the agent is away, so the probe measures the agent, not the sender.
    assert await hass.config_entries.async_unload(entry.entry_id)
    await _send_many(emulator, installed.conversation_id, 200)
    probe = LagProbe()
    probe.start()
    started = time.perf_counter()
    assert await hass.config_entries.async_setup(entry.entry_id)
    await wait_until(lambda: len(events) == 200, within=60)
    elapsed = time.perf_counter() - started
    await probe.stop()
    print(
        f"200 messages in {elapsed:.2f} s; worst loop lag {probe.worst * 1000:.1f} ms "
        f"(loop thread CPU {probe.worst_cpu * 1000:.1f} ms)"
    )
    # What the loop itself ran in one gap (its thread's CPU time): no long synchronous work
    # on the loop. The wall-clock lag also counts the executor's threads and the other
    # processes taking the cores (CI saw 80 ms with the loop's own share under 50 ms at
    # load 2 on 2 cores): a speed figure, printed above, not a pass or fail.
    assert probe.worst_cpu < MAX_LOOP_LAG
    assert await hass.config_entries.async_unload(entry.entry_id)
