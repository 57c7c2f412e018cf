"""Issue 12 item 11: a relay inventing devices cannot grow the sessions without bound.

The emulator plays the relay that announces device after device of the owner (each a real
libsignal store with its own identity, starting its own session): the records of the owner
in the conversation stay at MAX_DEVICES_PER_PEER, the evictions are counted, and the
owner's real device, which has talked with the agent both ways, keeps working.
"""

import time

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.limits import MAX_DEVICES_PER_PEER
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import is_established
from custom_components.pacerelle.events import EVENT_MESSAGE
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.reference_peer import reference_peer_available
from tests.helpers.runtime import wait_until

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")

INVENTED = 50


async def test_invented_devices_stay_bounded_and_the_real_device_keeps_working(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    conversation = installed.conversation_id
    real = PeerAddress(installed.owner_id, conversation, 1).storage_name
    async with connected_entry(hass, entry) as runtime:
        # The owner's phone and the agent talk both ways: its session is established.
        first = await emulator.send(conversation, text="hello", device_id="1")
        await wait_until(lambda: len(events) == 1)
        await runtime.agent.send_text("hi", source_message_id=first)
        await emulator.wait_inbox(conversation, 1)
        await emulator.send(conversation, text="thanks", device_id="1")
        await wait_until(lambda: len(events) == 2)
        assert is_established(runtime.agent.data.signal.sessions[real])

        started = time.monotonic()
        for device in range(2, INVENTED + 2):
            await emulator.send(conversation, text=f"I am device {device}", device_id=str(device))
        await wait_until(lambda: len(events) == INVENTED + 2, within=30)
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=10)
        print(f"{INVENTED} invented devices taken in within {time.monotonic() - started:.1f} s")

        data = runtime.agent.data
        names = list(data.signal.sessions)
        assert len(names) == MAX_DEVICES_PER_PEER
        assert real in names  # established: evicted only after every invented one
        assert data.evictions.sessions == INVENTED + 1 - MAX_DEVICES_PER_PEER
        assert set(data.signal.last_used) == set(names)

        still = await emulator.send(conversation, text="still me", device_id="1")
        await wait_until(lambda: len(events) == INVENTED + 3)
        assert [e.data["text"] for e in events if e.data["message_id"] == still] == ["still me"]

    # Bounded on disk too: the entry loads again with the same records.
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert list(entry.runtime_data.agent.data.signal.sessions) == names
    assert await hass.config_entries.async_unload(entry.entry_id)
