"""Issue 12 item 2: no sender can make the store unloadable, whatever it sends.

The attack is played for real: the owner's device (the reference peer inside the emulator)
sends a burst while Home Assistant is away, the agent takes it in, Home Assistant loads the
entry again from the same configuration directory, and the store must load, with what was
refused or evicted counted.
"""

import logging
import time
from pathlib import Path

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_HISTORY_BYTES,
    MAX_PENDING_BYTES,
    MAX_REQUEST_BYTES,
)
from custom_components.pacerelle.diagnostics import async_get_config_entry_diagnostics
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

# "\x01" is one byte on the wire and six ("\u0001") in the stored JSON: the cheapest way for a
# sender to grow the store, so the attack uses it.
ESCAPED = "\x01"
OVERSIZED = 120_000  # characters: ~720 KB stored, over MAX_REQUEST_BYTES
JUST_UNDER = (MAX_REQUEST_BYTES - 4096) // 6  # characters: just under it once stored
OVERSIZED_COUNT = 100  # ~72 MB that the old code kept as pending: over the loading limit
KEPT_COUNT = 80  # ~20 MB: over the pending and history budgets, so those evict


async def test_a_burst_of_huge_messages_leaves_a_store_that_loads(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    async with connected_entry(hass, entry):
        pass  # the agent publishes its keys: the owner's device can now encrypt to it
    conversation = installed.conversation_id
    for index in range(OVERSIZED_COUNT):
        await emulator.send(conversation, text=f"big{index}" + ESCAPED * OVERSIZED)
    kept = [
        await emulator.send(conversation, text=f"ok{index}" + ESCAPED * JUST_UNDER)
        for index in range(KEPT_COUNT)
    ]

    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=60)
    await wait_until(lambda: runtime.agent.data.inbox.received == {}, within=30)
    taken_in = time.monotonic() - started
    assert await hass.config_entries.async_unload(entry.entry_id)

    store = Path(hass.config.path(".storage", "pacerelle", f"{installed.agent_id}.db"))
    size = (await hass.async_add_executor_job(store.stat)).st_size
    print(f"store after the burst: {size} bytes; taken in within {taken_in:.1f} s")
    assert size <= MAX_DOCUMENT_BYTES

    # Home Assistant loads the entry again from the same configuration directory.
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.LOADED
    data = entry.runtime_data.agent.data
    evictions = data.evictions
    print(f"evictions after the burst: {evictions.to_json()}")
    assert evictions.refused_requests == OVERSIZED_COUNT
    assert evictions.pending_requests > 0
    assert evictions.history_entries > 0
    # What is kept is the newest, within the budgets.
    pending = list(data.inbox.pending)
    assert pending == kept[-len(pending) :]
    assert sum(len(r.text) * 6 for r in data.inbox.pending.values()) <= MAX_PENDING_BYTES
    assert sum(len(h.request.text) * 6 for h in data.history.requests) <= MAX_HISTORY_BYTES
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["evictions"]["refused_requests"] == OVERSIZED_COUNT
    assert "RequestTooLargeError" in caplog.text
    assert "Evicted the" in caplog.text
    assert await hass.config_entries.async_unload(entry.entry_id)
