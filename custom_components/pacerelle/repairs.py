"""The trust repair: "a new device of <person> wants to talk to your home", with its code.
(The other fixable issue, "added to a group", is issues/groups.py's; its flow is made here.)

One fixable issue per device that is new (unverified) or whose identity key changed, at
most MAX_DEVICE_REPAIRS of an agent at once (issues/devices.py raises and removes them). The
fix flow shows the verification code the person's app shows for that device and asks for
a choice, none made beforehand: trust it, block it (nothing is sent to it, its messages are
dropped), or keep it unverified for now. Only trust and block are decisions and end the
repair. "Keep it unverified" decides nothing: the flow aborts saying so and the repair
stays (the device's messages still fire, with `trusted: false`), so every undecided device
stays decidable in Settings -> System -> Repairs (issues/devices.py brings lost ones back).

The decision is for the key whose code the form showed: if the device presents another key
by the time the user answers (the relay can swap it between the two), nothing is decided
and the form is shown again with the new code and an error saying the key changed.
"""

from typing import Any, Final

import probatio
from homeassistant.components.repairs import RepairsFlow, RepairsFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import SelectSelector, SelectSelectorConfig

from .client import DeviceTrust, KeyChangedError, TrustState
from .const import CONF_CONVERSATION_ID
from .issues.devices import issue_id, placeholders
from .issues.groups import NameGroupFlow, is_group_notice
from .trust import TrustManager

__all__ = ["async_create_fix_flow", "issue_id"]  # issue_id: the tests name a repair by it

DECISION: Final = "decision"
KEEP: Final = "keep"
KEY_CHANGED: Final = "key_changed"
KEPT: Final = "kept"  # the abort of "keep it unverified": the repair stays
CHOOSE: Final = "choose"  # the form came back with nothing chosen
DECISIONS: Final = {"trust": TrustState.TRUSTED, KEEP: None, "block": TrustState.BLOCKED}


class TrustDeviceFlow(RepairsFlow):
    """Trust or block one device, for the key whose code it showed, or leave it waiting."""

    def __init__(self, entry_id: str, person_id: str, device_id: str) -> None:
        self._entry_id = entry_id
        self._person_id = person_id
        self._device_id = device_id
        self._shown: DeviceTrust | None = None

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> RepairsFlowResult:
        trust = _trust(self.hass, self._entry_id)
        device = trust.book.get(self._person_id, self._device_id) if trust else None
        if trust is None or device is None:
            return self.async_abort(reason="device_unknown")
        errors: dict[str, str] = {}
        # Home Assistant starts the step with {"issue_id": ...}. The choice is optional in the
        # schema (the frontend fills a required one with its first option): a form sent back
        # without one is shown again, asking for it.
        if user_input is not None and self._shown is not None:
            if (choice := user_input.get(DECISION)) is None:
                errors = {DECISION: CHOOSE}
            elif (decision := DECISIONS[choice]) is None:
                return self.async_abort(reason=KEPT)  # an abort leaves the issue in place
            else:
                try:
                    await trust.async_decide(
                        self._person_id, self._device_id, decision, key=self._shown.identity_key
                    )
                except KeyChangedError as changed:
                    device, errors = changed.current, {"base": KEY_CHANGED}
                else:
                    return self.async_create_entry(data={})
        self._shown = device
        entry = self.hass.config_entries.async_get_entry(self._entry_id)
        name = entry.title if entry is not None else ""
        return self.async_show_form(
            step_id="init",
            data_schema=probatio.Schema(
                {
                    probatio.Optional(DECISION): SelectSelector(
                        SelectSelectorConfig(options=list(DECISIONS), translation_key=DECISION)
                    )
                }
            ),
            description_placeholders=placeholders(name, device),
            errors=errors,
        )


def _trust(hass: HomeAssistant, entry_id: str) -> TrustManager | None:
    entry = hass.config_entries.async_get_entry(entry_id)
    runtime = getattr(entry, "runtime_data", None) if entry is not None else None
    trust: TrustManager | None = getattr(runtime, "trust", None)
    return trust


async def async_create_fix_flow(
    hass: HomeAssistant, issue_id: str, data: dict[str, str | int | float | None] | None
) -> RepairsFlow:
    """The fix flow of a fixable issue: a group notice's, else a trust issue's."""
    assert data is not None
    if is_group_notice(data):
        return NameGroupFlow(str(data["entry_id"]), str(data[CONF_CONVERSATION_ID]))
    return TrustDeviceFlow(str(data["entry_id"]), str(data["person_id"]), str(data["device_id"]))
