"""What the user learns about messages the agent could not decrypt.

Each failed direct message fires `pacerelle_decryption_failed` (events.py; never ciphertext or
plaintext) and is counted per person and device (client/values/decrypt_failures.py). A run of
failures from a device the agent had a session with raises a repair issue: the agent's state is
probably older than the conversation (a restored backup), with what the person must do; it
clears when that device starts a new session (a PreKey message that decrypts).
Nothing is sent back: Pacerelle's gateway carries only PreKey and Signal messages (PROTOCOL.md),
no retry receipt, and an unauthenticated "start over" signal is one more thing a hostile relay
could forge; so the issue asks the person to start a new session themselves.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from homeassistant.core import HomeAssistant, callback

from ..client import DecryptFailures, DecryptionOutcome
from ..events import EVENT_DECRYPTION_FAILED
from .runtime import (
    clear_decryption_stalled,
    clear_store_restored,
    raise_decryption_stalled,
)


class DecryptionWatch:
    """Turns the agent's decryption outcomes into events, counts and repair issues."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        agent_id: str,
        agent_name: str,
        failures: DecryptFailures,
        status_changed: Callable[[], None],
    ) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._agent_id = agent_id
        self._agent_name = agent_name
        self._failures = failures
        self._status_changed = status_changed

    @callback
    def handle(self, outcome: DecryptionOutcome) -> None:
        before = self._failures.devices.get(outcome.device)
        was_stalled = before is not None and before.stalled
        counts = self._failures.record(outcome)
        device = outcome.device
        if outcome.failed:
            self._hass.bus.async_fire(EVENT_DECRYPTION_FAILED, self._event_data(outcome))
        if counts.stalled and not was_stalled:
            raise_decryption_stalled(
                self._hass,
                self._entry_id,
                self._agent_name,
                device,
                counts.device_code,
            )
        elif was_stalled and not counts.stalled:
            clear_decryption_stalled(self._hass, self._entry_id, device)
        if outcome.new_session:  # a restored store's warning ends with a new session too
            clear_store_restored(self._hass, self._entry_id)
        if outcome.failed or before is not None:
            self._status_changed()

    def _event_data(self, outcome: DecryptionOutcome) -> dict[str, Any]:
        device = outcome.device
        return {
            "entry_id": self._entry_id,
            "agent_id": self._agent_id,
            "sender_id": device.sender_id,
            "sender_device_id": device.device_id,
            "conversation_id": device.conversation_id,
            "reason": outcome.reason,
            "at": datetime.fromtimestamp(outcome.at, UTC).isoformat(),
        }
