"""The event schema lives once, in README.md "Events": every field the integration puts in
an event's data is named in that event's section (a field added without its line fails)."""

import re
from pathlib import Path

from custom_components.pacerelle.client import (
    Request,
)
from custom_components.pacerelle.client.values.widgets import WIDGET_RESPONSE
from custom_components.pacerelle.events import (
    EVENT_MESSAGE,
    EVENT_MESSAGE_STATUS,
    EVENT_WIDGET_RESPONSE,
    event_data,
    message_status_data,
    widget_response_data,
)

README = Path(__file__).parents[2] / "README.md"


def _section(event_type: str) -> str:
    """The README's text under `### `{event_type}`` up to the next heading."""
    text = README.read_text(encoding="utf-8")
    found = re.search(rf"^### `{event_type}`\n(.*?)^#", text, re.M | re.S)
    assert found is not None, event_type
    return found.group(1)


def _undocumented(event_type: str, fields: list[str]) -> list[str]:
    section = _section(event_type)
    return [name for name in fields if f"`{name}`" not in section]


def test_every_event_field_is_in_the_readme() -> None:
    answer = {"type": WIDGET_RESPONSE, "id": "r-1", "ref": "w-1", "value": "yes"}
    request = Request(
        "m-1",
        "c-1",
        "usr_ana",
        "1",
        "agt_home",
        True,
        WIDGET_RESPONSE,
        "yes",
        None,
        1.0,
        widget=answer,
    )
    message = event_data("e", "agt_home", request, saved={}, transcript=None)
    response = widget_response_data("e", "agt_home", request)
    assert response is not None
    status = message_status_data("e", "agt_home", "m-2", "c-1", "sent")
    assert _undocumented(EVENT_MESSAGE, list(message)) == []
    assert _undocumented(EVENT_WIDGET_RESPONSE, list(response)) == []
    assert _undocumented(EVENT_MESSAGE_STATUS, list(status)) == []


def test_the_check_sees_a_missing_field() -> None:
    assert _undocumented(EVENT_MESSAGE, ["message_id", "not_a_field"]) == ["not_a_field"]
