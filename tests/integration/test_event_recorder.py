"""What people write is neither shown on the event entity nor written to the recorder."""

import pytest
from homeassistant.components.recorder import Recorder
from homeassistant.components.recorder.history import get_significant_states
from homeassistant.const import STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import wait_state


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(recorder_db_url: str, request: pytest.FixtureRequest) -> None:
    """The root one, after the recorder's database (which must come before `hass`)."""
    request.getfixturevalue("enable_custom_integrations")


async def test_what_people_wrote_stays_out_of_the_recorder(
    recorder_mock: Recorder, hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    messages = setup.entity_id(hass, "event", "messages")
    start = dt_util.utcnow()
    files = [{"name": "secret.txt", "mime": "text/plain", "data_b64": "c2VjcmV0"}]
    await emulator.send(
        setup.installed.conversation_id, text="The safe code is 1234", attachments=files
    )
    await wait_state(hass, messages, lambda state: state != STATE_UNKNOWN)
    live = hass.states.get(messages)
    assert live is not None
    assert "text" not in live.attributes  # not shown on the entity (event.py)
    await async_wait_recording_done(hass)
    history = await recorder_mock.async_add_executor_job(
        get_significant_states, hass, start, None, [messages], None, True, False
    )
    (recorded,) = [state for state in history[messages] if state.state != STATE_UNKNOWN]
    assert recorded.attributes["event_type"] == "message"
    assert recorded.attributes["message_id"] == live.attributes["message_id"]
    assert not {"text", "attachments", "widget", "widget_response"} & set(recorded.attributes)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
