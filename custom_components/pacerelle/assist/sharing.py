"""How the Assist bridge shares a conversation with automations.

A keyword automation receives every `pacerelle_message` event and the bridge every
request (signals.py, right after its event). A request an automation has answered (a
reply, a question or a widget whose source or reply-to is the request, sent or queued) or
marked processed within AUTOMATION_GRACE of its event belongs to that automation: the
bridge leaves it alone, so the person does not get a second answer (Assist's "Sorry, I
couldn't understand that" after the automation's). The bridge looks again each time the
agent reports a send or a mark, so a request taken is left at once; one still pending and
unanswered when the grace ends goes to Assist. The grace itself stays: nothing tells that
no automation, script or websocket client is going to answer.
"""

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..signals import message_status_signal, status_signal

# Long enough for an automation's first send or mark_processed (they start at the event);
# short enough that Assist's answer does not feel late.
AUTOMATION_GRACE: Final = 1.5


async def async_grace(
    hass: HomeAssistant, entry_id: str, since: float, taken: Callable[[], bool]
) -> None:
    """Until `taken()` holds or AUTOMATION_GRACE has passed since `since`
    (time.monotonic()), looking again whenever the agent reports a send's status or a
    change of its counters (a request marked processed)."""
    woken = asyncio.Event()

    @callback
    def wake(*_args: object) -> None:
        woken.set()

    stops = [
        async_dispatcher_connect(hass, status_signal(entry_id), wake),
        async_dispatcher_connect(hass, message_status_signal(entry_id), wake),
    ]
    try:
        while not taken():
            delay = AUTOMATION_GRACE - (time.monotonic() - since)
            if delay <= 0:
                return
            woken.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await woken.wait()
    finally:
        for stop in stops:
            stop()
