"""Bench-only integration inside the soak's Home Assistant: its clock, its figures, its events.

Linked into the soak's config dir as custom_components/pacerelle_soak_probe (soak_system.py).
- `advance` moves the process's clock forward (soak_clock.py); the timers due run at once.
- `figures` (a response) tells what only the process itself can count: asyncio tasks (by
  coroutine), event bus listeners, dispatcher connections, threads, open repairs of the
  integration; with `tracemalloc_start` called first, the allocation sites that grew most
  since the previous `figures`; with `objects`, the types whose live objects (gc) grew most
  since the previous such call.
- every `pacerelle_message`, `pacerelle_widget_response` and `pacerelle_decryption_failed`
  is appended to soak_events.jsonl with the real time it fired at (one `write` on an
  O_APPEND descriptor, in the listener: the record exists before the bus returns; it
  survives a restart and a kill).
"""

import asyncio
import collections
import gc
import json
import os
import threading
import tracemalloc
from typing import Any

import probatio
from homeassistant.core import Event, HomeAssistant, ServiceCall, SupportsResponse, callback
from homeassistant.helpers import issue_registry
from homeassistant.helpers.dispatcher import DATA_DISPATCHER
from homeassistant.helpers.typing import ConfigType

from tests.bench import soak_clock

DOMAIN = "pacerelle_soak_probe"
EVENTS_FILE = "soak_events.jsonl"
RECORDED = ("pacerelle_message", "pacerelle_widget_response", "pacerelle_decryption_failed")
TOP_SITES = 12
TOP_TASKS = 8


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    path = hass.config.path(EVENTS_FILE)
    fd = await hass.async_add_executor_job(
        os.open, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
    )

    @callback
    def record(event: Event[dict[str, Any]]) -> None:
        data = event.data
        line = {
            "type": event.event_type,
            "message_id": data.get("message_id"),
            "agent_id": data.get("agent_id"),
            # The real time: `time_fired_timestamp` reads the shifted time.time().
            "wall": soak_clock.real_time(),
        }
        os.write(fd, json.dumps(line).encode() + b"\n")

    for event_type in RECORDED:
        hass.bus.async_listen(event_type, record)

    async def advance(call: ServiceCall) -> dict[str, Any]:
        return {"offset": soak_clock.advance(float(call.data["seconds"]))}

    previous: list[tracemalloc.Snapshot] = []

    async def start_tracing(call: ServiceCall) -> dict[str, Any]:
        tracemalloc.start(int(call.data.get("frames", 1)))
        previous[:] = [tracemalloc.take_snapshot()]
        return {"tracing": True}

    counted: list[collections.Counter[str]] = []

    async def figures(call: ServiceCall) -> dict[str, Any]:
        result = _figures(hass)
        if call.data.get("objects"):
            counts = collections.Counter(type(item).__qualname__ for item in gc.get_objects())
            if counted:
                grown = counts - counted[0]
                result["grown_types"] = grown.most_common(TOP_SITES)
            counted[:] = [counts]
        if tracemalloc.is_tracing():
            snapshot = tracemalloc.take_snapshot()
            result["traced_bytes"] = tracemalloc.get_traced_memory()[0]
            result["grown_sites"] = _grown(snapshot, previous[0]) if previous else []
            previous[:] = [snapshot]
        return result

    hass.services.async_register(
        DOMAIN,
        "advance",
        advance,
        schema=probatio.Schema({probatio.Required("seconds"): probatio.Coerce(float)}),
        supports_response=SupportsResponse.OPTIONAL,
    )
    hass.services.async_register(
        DOMAIN, "tracemalloc_start", start_tracing, supports_response=SupportsResponse.ONLY
    )
    hass.services.async_register(
        DOMAIN, "figures", figures, supports_response=SupportsResponse.ONLY
    )
    return True


def _figures(hass: HomeAssistant) -> dict[str, Any]:
    tasks = asyncio.all_tasks()
    names = collections.Counter(_task_name(task) for task in tasks)
    dispatcher = hass.data.get(DATA_DISPATCHER, {})
    issues = issue_registry.async_get(hass).issues.values()
    return {
        "tasks": len(tasks),
        "top_tasks": names.most_common(TOP_TASKS),
        "bus_listeners": sum(hass.bus.async_listeners().values()),
        "dispatcher_targets": sum(len(targets) for targets in dispatcher.values()),
        "threads": threading.active_count(),
        "repairs": sorted(
            issue.issue_id for issue in issues if issue.domain == "pacerelle" and issue.active
        ),
    }


def _task_name(task: asyncio.Task[Any]) -> str:
    code = getattr(task.get_coro(), "__qualname__", None)
    return str(code or task.get_name())


def _grown(snapshot: tracemalloc.Snapshot, before: tracemalloc.Snapshot) -> list[list[Any]]:
    """The allocation sites whose live bytes grew most: [site, bytes grown, count grown]."""
    stats = snapshot.compare_to(before, "traceback")
    return [
        [" < ".join(str(frame) for frame in stat.traceback), stat.size_diff, stat.count_diff]
        for stat in stats[:TOP_SITES]
        if stat.size_diff > 0
    ]
