"""Whether the agent is still in each named group, asked of the relay (client:
`Agent.check_groups`, conversations/membership.py) whenever the agent connects, when a
conversation is named, and every GROUP_CHECK_INTERVAL. A group the agent left shows its
entities unavailable, not deleted (entity.py); one of its messages, or the next check that
finds the agent in it again, brings them back. Only named groups are asked about, and one
check runs at a time (a relay holding its answers back does not pile checks up).
"""

import asyncio
from datetime import datetime, timedelta
from typing import Final

from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.event import async_track_time_interval

from .client import ConnectionState
from .entity import named_conversations
from .runtime import PacerelleConfigEntry
from .signals import status_signal

GROUP_CHECK_INTERVAL: Final = timedelta(minutes=15)


@callback
def async_watch_groups(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Check the named groups' membership for as long as the entry is loaded."""
    runtime = entry.runtime_data
    connected = False
    running: asyncio.Task[None] | None = None

    @callback
    def check(_now: datetime | None = None) -> None:
        nonlocal running
        if running is not None and not running.done():
            return
        agent = runtime.agent
        groups = [
            c.conversation_id
            for c in named_conversations(entry)
            if agent.is_group(c.conversation_id)
        ]
        if groups and runtime.status.state is ConnectionState.CONNECTED:
            running = entry.async_create_background_task(
                hass, runtime.agent.check_groups(groups), "pacerelle group membership"
            )

    @callback
    def status() -> None:
        nonlocal connected
        now = runtime.status.state is ConnectionState.CONNECTED
        if now and not connected:
            check()
        connected = now

    @callback
    def entry_changed(change: ConfigEntryChange, changed: ConfigEntry) -> None:
        if change is ConfigEntryChange.UPDATED and changed.entry_id == entry.entry_id:
            check()

    entry.async_on_unload(async_dispatcher_connect(hass, status_signal(entry.entry_id), status))
    entry.async_on_unload(
        async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, entry_changed)
    )
    entry.async_on_unload(async_track_time_interval(hass, check, GROUP_CHECK_INTERVAL))
    status()
