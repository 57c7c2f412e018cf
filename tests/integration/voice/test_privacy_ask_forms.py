"""What a person types into a `pacerelle.ask` form never reaches the recorder's database
(issue 25, finding 11), while the script and automations still get it live."""

import asyncio

import pytest
from homeassistant.components.recorder import Recorder
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle import events
from custom_components.pacerelle.events import EVENT_MESSAGE, EVENT_WIDGET_RESPONSE
from custom_components.pacerelle.voice.privacy import CONTENT_EVENTS, CONTENT_FREE_EVENTS
from tests.helpers.agent import start_agent
from tests.helpers.ask import widget_on_device
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.recorder_db import CONTROL_EVENT, recorded_events
from tests.helpers.runtime import wait_until
from tests.helpers.services import call

PASSWORD = "wifi-pass-Quokka-4711"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(recorder_db_url: str, request: pytest.FixtureRequest) -> None:
    """The root one, after the recorder's database (which must come before `hass`)."""
    request.getfixturevalue("enable_custom_integrations")


async def test_a_password_typed_into_a_form_is_not_in_the_recorder_database(
    recorder_mock: Recorder, hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    fields = [{"name": "wifi", "label": "Wi-Fi password", "type": "password"}]
    asked = hass.async_create_task(
        call(hass, "ask", {"kind": "form", "title": "Wi-Fi?", "fields": fields, "timeout": 30})
    )
    question = await widget_on_device(emulator, agent, 1)
    answer_id = await emulator.send(
        agent.conversation_id,
        widget_response={"ref": question["id"], "value": {"wifi": PASSWORD}},
    )
    result = await asyncio.wait_for(asked, 10)
    assert (result["status"], result["value"]) == ("answered", {"wifi": PASSWORD})
    await wait_until(lambda: [e for e in answers if e.data["message_id"] == answer_id])
    recorded = await recorded_events(hass, recorder_mock, PASSWORD)
    assert not [row for row in recorded if row[0] in (EVENT_WIDGET_RESPONSE, EVENT_MESSAGE)]
    assert not [row for row in recorded if row[0] != CONTROL_EVENT and PASSWORD in row[1]]
    assert await hass.config_entries.async_unload(agent.entry.entry_id)


def test_every_event_type_is_decided_content_or_not() -> None:
    """A new event type must be put in one set or the other (voice/privacy.py)."""
    fired = {
        value
        for name, value in vars(events).items()
        if name.startswith("EVENT_") and isinstance(value, str)
    }
    assert fired == CONTENT_EVENTS | CONTENT_FREE_EVENTS
    assert not CONTENT_EVENTS & CONTENT_FREE_EVENTS
