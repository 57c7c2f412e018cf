"""What the recorder's database holds: every event's type and data, read with a control event
that shows the query sees event data."""

import json

from homeassistant.components.recorder import Recorder
from homeassistant.components.recorder.db_schema import EventData, Events, EventTypes
from homeassistant.components.recorder.util import session_scope
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

CONTROL_EVENT = "pacerelle_test_control"


def _recorded(recorder: Recorder) -> list[tuple[str, str]]:
    """(event type, data) of every event in the database."""
    with session_scope(session=recorder.get_session(), read_only=True) as session:
        rows = (
            session.query(EventTypes.event_type, EventData.shared_data)
            .select_from(Events)
            .outerjoin(EventTypes, Events.event_type_id == EventTypes.event_type_id)
            .outerjoin(EventData, Events.data_id == EventData.data_id)
            .all()
        )
    return [(str(kind), str(data or "")) for kind, data in rows]


async def recorded_events(
    hass: HomeAssistant, recorder: Recorder, words: str
) -> list[tuple[str, str]]:
    """(event type, data) of every recorded event, once a CONTROL_EVENT carrying `words` is
    recorded and found: the same words in another event's data would be found too."""
    hass.bus.async_fire(CONTROL_EVENT, {"words": words})
    await async_wait_recording_done(hass)
    recorded = await recorder.async_add_executor_job(_recorded, recorder)
    assert (CONTROL_EVENT, json.dumps({"words": words}, separators=(",", ":"))) in recorded
    return recorded
