"""What an agent tells the integration's own consumers, by dispatcher signal per entry.

The bus events (events.py) are for users' automations, and anyone may fire them (an
`event:` action, the websocket `fire_event` command, another integration): no consumer
inside the integration reads them. The Assist bridge, `pacerelle.ask` and the event
entity subscribe to these signals instead, which carry the typed request the agent
accepted. Each is sent right after its bus event (events.py `MessageEvents`), so an
automation triggered by the event has started before the bridge queues the request.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.core import Event
from homeassistant.util.signal_type import SignalType

from .client import DeviceTrust, Request, WidgetResponse
from .const import DOMAIN


@dataclass(frozen=True, slots=True)
class Delivered:
    """One accepted request as its `pacerelle_message` told it: where its files were
    saved (attachment id to path, None: not saved; None: no folder) and its voice note's
    transcript, with the one trust judgement made when it was opened."""

    request: Request
    saved: Mapping[str, str | None] | None
    transcript: str | None

    @property
    def trust(self) -> DeviceTrust:
        return self.request.judged


@dataclass(frozen=True, slots=True)
class WidgetAnswer:
    """A person's answer to one of our widgets (`pacerelle_widget_response`)."""

    request: Request
    response: WidgetResponse

    @property
    def value(self) -> Any:
        """What was answered; None when cancelled."""
        return None if self.response.cancelled else self.response.value


def status_signal(entry_id: str) -> str:
    """Sent (with no data) whenever the agent's status may have changed."""
    return f"{DOMAIN}_status_{entry_id}"


def message_signal(entry_id: str) -> SignalType[Delivered]:
    """Sent for each accepted request, after its `pacerelle_message`."""
    return SignalType(f"{DOMAIN}_message_{entry_id}")


def widget_answer_signal(entry_id: str) -> SignalType[WidgetAnswer]:
    """Sent for each answer to one of our widgets, after its `pacerelle_widget_response`."""
    return SignalType(f"{DOMAIN}_widget_answer_{entry_id}")


def event_signal(entry_id: str) -> SignalType[Event[dict[str, Any]]]:
    """Sent with each `pacerelle_message` and `pacerelle_widget_response` the agent fires
    (the same type, data and context): the device triggers' source."""
    return SignalType(f"{DOMAIN}_event_{entry_id}")


def message_status_signal(entry_id: str) -> SignalType[str, str, str]:
    """Sent with (message_id, conversation_id, status) after each
    `pacerelle_message_status`: a send's delivery status changed."""
    return SignalType(f"{DOMAIN}_message_status_{entry_id}")
