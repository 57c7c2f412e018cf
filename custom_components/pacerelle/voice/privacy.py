"""What people write or say to the agent stays out of the recorder's database.

Home Assistant's recorder writes every event fired on the bus, with its data, unless its
type is excluded (`recorder: exclude: event_types:` in configuration.yaml). It offers an
integration nothing finer: entities have `_unrecorded_attributes`, events have no
per-field or per-event exclusion, and the bus has no unrecorded way to fire. Yet
`pacerelle_message` now carries a voice note's transcript (voice.py), and the issue is
firm: a transcript never reaches the recorder's history. Automations need the transcript
in the event's data (`trigger.event.data.transcript`), so it cannot move elsewhere.

Decision: the integration adds every event type that carries what a person wrote, said or
answered (`CONTENT_EVENTS`: `pacerelle_message`, and `pacerelle_widget_response`, whose
`value` is what was typed into a form, a password field's included) to the recorder's set of
excluded event types (the same set the YAML option fills, read by the recorder for every
event; Home Assistant offers no public way to add to it, and no core integration keeps its
events out otherwise) when it sets up, whether or not a voice pipeline is chosen. The whole
event is left out, ids included: the event entity already keeps what people wrote out of the
history, and this makes the bus events agree. Automations, the event entity, device triggers
and `pacerelle.ask` still receive every event live; only the database does not keep it. The
delivery status and decryption failure events are still recorded (`CONTENT_FREE_EVENTS`:
ids, states and times only); every event type of events.py is in one of the two sets
(tests/client/conversations/test_widgets_recorder.py checks it), so a new one is decided.
Tests with the real recorder (tests/integration/voice/test_recorder.py,
tests/client/conversations/test_widgets_recorder.py) prove the transcript and a form's
answer are not in the database, so a change of the recorder's internals cannot silently undo
this (they run on both supported releases).
"""

import logging
from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.recorder import get_instance

from ..events import (
    EVENT_DECRYPTION_FAILED,
    EVENT_MESSAGE,
    EVENT_MESSAGE_STATUS,
    EVENT_WIDGET_RESPONSE,
)

_LOGGER = logging.getLogger(__name__)

CONTENT_EVENTS: frozenset[str] = frozenset({EVENT_MESSAGE, EVENT_WIDGET_RESPONSE})
CONTENT_FREE_EVENTS: frozenset[str] = frozenset({EVENT_DECRYPTION_FAILED, EVENT_MESSAGE_STATUS})
UNRECORDED_EVENTS: frozenset[str] = CONTENT_EVENTS
RECORDER_DOMAIN: Final = "recorder"


@callback
def async_keep_messages_unrecorded(hass: HomeAssistant) -> None:
    """Exclude the events that carry what people wrote or said from the recorder, if it runs.

    The recorder is set up before any integration (bootstrap's first stage), so it is
    either running by now or not used at all."""
    if RECORDER_DOMAIN not in hass.config.components:
        return
    # No public API adds an excluded event type: the narrowest hold is the recorder's public
    # set that `exclude: event_types:` fills (tests/integration/voice/test_recorder.py).
    excluded = get_instance(hass).exclude_event_types
    missing = {name for name in UNRECORDED_EVENTS if name not in excluded}
    if missing:
        excluded.update(missing)
        _LOGGER.debug("Recorder excludes %s", sorted(missing))
