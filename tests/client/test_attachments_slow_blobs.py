"""A relay serving blobs at 1 byte/s blocks neither sends nor events for long (issue 12, item 5).

A real Home Assistant (`hass`) with the integration's MessageEvents saving files into a
media folder, the HA-free agent, and the emulator behind a middleware of the test's own
that trickles every blob at one byte per second. Downloads run without the agent's lock:
a send completes in well under a second meanwhile, and the message's files are given up
at the download deadline (short here, through the constructor), its event firing with
each file's `path` null.
"""

import asyncio
import base64
import logging
import os
import time
from pathlib import Path

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.events import EVENT_MESSAGE, MessageEvents
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.hostile_relay import Hostility

pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]

DEADLINE = 2.0
SEND_BOUND = 1.0
_LOGGER = logging.getLogger(__name__)


async def test_send_never_waits_for_a_slow_download(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    tmp_path: Path,
) -> None:
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    installed = await hostile_emulator.install()
    events = async_capture_events(hass, EVENT_MESSAGE)
    # The agent hands the events its own download with each request to prepare.
    message_events = MessageEvents(
        hass, "entry", installed.agent_id, str(tmp_path), download_deadline=DEADLINE
    )
    recorder = Recorder()
    recorder.prepare = message_events.prepare  # type: ignore[method-assign]
    recorder.deliver = message_events.deliver  # type: ignore[method-assign]
    async with asyncio.timeout(30), connected_agent(hostile_emulator, installed, recorder) as agent:
        hello = await hostile_emulator.send(installed.conversation_id, text="hello")
        await wait_for(lambda: len(events) == 1)

        hostility.blob_bytes_per_second = 1.0
        files = [
            {"data_b64": base64.b64encode(os.urandom(64)).decode(), "name": f"{n}.jpg"}
            for n in range(3)
        ]
        started = time.monotonic()
        slow = await hostile_emulator.send(
            installed.conversation_id, text="three photos", attachments=files
        )
        await wait_for(lambda: hostility.blob_downloads_started >= 1)

        before = time.monotonic()
        async with asyncio.timeout(SEND_BOUND):
            reply = await agent.send_text("the door is locked", source_message_id=hello)
        send_latency = time.monotonic() - before
        (entry,) = await hostile_emulator.wait_inbox(installed.conversation_id, 1)
        assert entry["message_id"] == reply.message_id
        assert len(events) == 1  # the slow message's event waits for its files

        await wait_for(lambda: len(events) == 2, within=DEADLINE + 5)
        event_delay = time.monotonic() - started
        _LOGGER.warning(
            "Blobs at 1 byte/s: send took %.3f s during the download; the event fired after "
            "%.2f s (deadline %.1f s)",
            send_latency,
            event_delay,
            DEADLINE,
        )
        data = events[1].data
        assert data["message_id"] == slow
        assert [item["path"] for item in data["attachments"]] == [None, None, None]
        assert DEADLINE <= event_delay < DEADLINE + 3
        assert list(tmp_path.rglob("*.jpg")) == []


def _request(number: int) -> Request:
    return Request(
        message_id=f"m{number}",
        conversation_id="c1",
        sender_id="u1",
        sender_device_id="1",
        to="a1",
        encrypted=True,
        kind="chat.message",
        text=f"photo {number}",
        reply_to_message_id=None,
        received_at=time.time(),
        attachments=({"id": f"f{number}", "name": "door.jpg", "mime": "image/jpeg", "size": 9},),
    )


async def test_downloads_are_bounded_in_number_and_in_time(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    """Four messages prepared at once (one batch): two downloads at a time, one deadline."""
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    events = async_capture_events(hass, EVENT_MESSAGE)
    running = 0
    peak = 0
    started: list[str] = []

    async def never_ending(message_id: str, index: int) -> bytes:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        started.append(f"{message_id}/{index}")
        try:
            await asyncio.Event().wait()  # a relay that never finishes the blob
        finally:
            running -= 1
        raise AssertionError("unreachable")

    message_events = MessageEvents(
        hass, "entry", "a1", str(tmp_path), download_deadline=0.5, max_downloads=2
    )
    requests = [_request(number) for number in range(4)]
    before = time.monotonic()
    async with asyncio.timeout(5):
        await asyncio.gather(*(message_events.prepare(r, never_ending) for r in requests))
    elapsed = time.monotonic() - before
    for request in requests:
        message_events.deliver(request)
    await hass.async_block_till_done()

    assert peak == 2
    # The first two took the slots; the others waited for one until their own deadline
    # (which may free a slot for an instant before their cancellation lands).
    assert started[:2] == ["m0/0", "m1/0"]
    assert running == 0
    assert 0.5 <= elapsed < 1.5
    assert [event.data["message_id"] for event in events] == ["m0", "m1", "m2", "m3"]
    assert all(event.data["attachments"][0]["path"] is None for event in events)
