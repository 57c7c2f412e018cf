"""What people write or say to the agent stays out of the recorder's database.

Home Assistant's recorder writes every event fired on the bus, with its data, unless its
type is excluded (`recorder: exclude: event_types:` in configuration.yaml). It offers an
integration nothing finer: entities have `_unrecorded_attributes`, events have no
per-field or per-event exclusion, and the bus has no unrecorded way to fire. Yet
`pacerelle_message` now carries a voice note's transcript (voice.py), and the issue is
firm: a transcript never reaches the recorder's history. Automations need the transcript
in the event's data (`trigger.event.data.transcript`), so it cannot move elsewhere.

Decision: the integration adds `pacerelle_message` to the recorder's set of excluded
event types (the same set the YAML option fills, read by the recorder for every event)
when it sets up, whether or not a voice pipeline is chosen. The whole event is left out,
written text included: the event entity already keeps what people wrote out of the
history, and this makes the bus event agree. Automations, the event entity and device
triggers still receive every event live; only the database does not keep it. The
delivery status, widget answer and decryption failure events are still recorded (they
carry no message text or transcript). A test with the real recorder
(tests/test_voice_recorder.py) proves the transcript is not in the database, so a change
of the recorder's internals cannot silently undo this.
"""

import logging

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.recorder import DATA_INSTANCE

from .events import EVENT_MESSAGE

_LOGGER = logging.getLogger(__name__)

UNRECORDED_EVENTS: frozenset[str] = frozenset({EVENT_MESSAGE})


@callback
def async_keep_messages_unrecorded(hass: HomeAssistant) -> None:
    """Exclude the message event from the recorder, if the recorder runs.

    The recorder is set up before any integration (bootstrap's first stage), so it is
    either running by now or not used at all."""
    recorder = hass.data.get(DATA_INSTANCE)
    if recorder is None:
        return
    missing = {name for name in UNRECORDED_EVENTS if name not in recorder.exclude_event_types}
    if missing:
        recorder.exclude_event_types.update(missing)
        _LOGGER.debug("Recorder excludes %s", sorted(missing))
