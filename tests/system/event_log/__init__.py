"""Test-only integration: appends every `pacerelle_message` event to a file, synchronously.

`pacerelle_message_status` events (the outbox, client/outbox/flush.py) go to a file of their
own, the same way.

Linked into the system tests' config dir as custom_components/pacerelle_event_log. The
listener is a callback, so the line is written (one `write` on an O_APPEND descriptor)
before the event bus returns to the integration that fired the event: whatever the
integration does next, the record already exists. A SIGKILL cannot lose it either: the
kernel keeps what was written, so no fsync is needed (it would only time the disk).
"""

import json
import os
from typing import Any

from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers.typing import ConfigType

DOMAIN = "pacerelle_event_log"
EVENT_TYPE = "pacerelle_message"
FILE_NAME = "pacerelle_events.jsonl"
STATUS_EVENT_TYPE = "pacerelle_message_status"
STATUS_FILE_NAME = "pacerelle_status.jsonl"


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    await _async_record(hass, EVENT_TYPE, FILE_NAME)
    await _async_record(hass, STATUS_EVENT_TYPE, STATUS_FILE_NAME)
    return True


async def _async_record(hass: HomeAssistant, event_type: str, file_name: str) -> None:
    path = hass.config.path(file_name)
    fd = await hass.async_add_executor_job(
        os.open, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
    )

    @callback
    def record(event: Event[dict[str, Any]]) -> None:
        line = json.dumps({"time_fired": event.time_fired_timestamp, **event.data})
        os.write(fd, line.encode() + b"\n")

    hass.bus.async_listen(event_type, record)
