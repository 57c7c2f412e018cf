"""A voice note's transcript (and what people write) never reaches the recorder's database,
while automations still get it live in `pacerelle_message`."""

import pytest
from homeassistant.components.recorder import Recorder
from homeassistant.components.recorder.history import get_significant_states
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.options import CONF_VOICE_PIPELINE, CONF_VOICE_TRANSCRIPTS
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.recorder_db import CONTROL_EVENT, recorded_events
from tests.helpers.runtime import wait_until
from tests.helpers.voice import send_voice_note
from tests.helpers.voice_assist import async_voice_assistant, wav_note

SECRET_SPEECH = "the alarm code is 4711"
SECRET_TEXT = "the spare key is under the mat"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(recorder_db_url: str, request: pytest.FixtureRequest) -> None:
    """The root one, after the recorder's database (which must come before `hass`)."""
    request.getfixturevalue("enable_custom_integrations")


async def test_the_transcript_is_not_in_the_recorder_database(
    recorder_mock: Recorder, hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    voice = await async_voice_assistant(hass)
    voice.stt.text = SECRET_SPEECH
    options = {CONF_VOICE_PIPELINE: voice.pipeline.id, CONF_VOICE_TRANSCRIPTS: True}
    started = await start_agent(hass, emulator, options=options)
    installed, entry = started.installed, started.entry
    events = async_capture_events(hass, EVENT_MESSAGE)
    start = dt_util.utcnow()
    note, _ = wav_note(0.5)
    voice_id = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    await wait_until(lambda: len(events) == 1)
    assert events[0].data["transcript"] == SECRET_SPEECH  # automations get it live
    # No event entity shows it (event.py); their history below keeps none either.
    messages_entity = [
        state
        for state in hass.states.async_all("event")
        if state.attributes.get("message_id") == voice_id
    ]
    assert len(messages_entity) == 2  # the agent's and its owner's conversation's ("Owner")
    assert not [state for state in messages_entity if "transcript" in state.attributes]
    await emulator.send(installed.conversation_id, text=SECRET_TEXT)
    await wait_until(lambda: len(events) == 2)
    recorded = await recorded_events(hass, recorder_mock, SECRET_SPEECH)
    assert not [row for row in recorded if row[0] == EVENT_MESSAGE]
    leaked = [row for row in recorded if row[0] != CONTROL_EVENT and SECRET_SPEECH in row[1]]
    assert leaked == []
    assert not [row for row in recorded if SECRET_TEXT in row[1]]

    # Their recorded history does not keep it either.
    entities = [state.entity_id for state in messages_entity]
    history = await recorder_mock.async_add_executor_job(
        get_significant_states, hass, start, None, entities, None, True, False
    )
    for messages in entities:
        shown = [s.attributes.get("transcript") for s in history[messages]]
        assert SECRET_SPEECH not in shown
        assert [s for s in history[messages] if s.attributes.get("message_id") == voice_id]
    assert await hass.config_entries.async_unload(entry.entry_id)
