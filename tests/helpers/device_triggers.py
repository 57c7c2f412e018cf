"""Automations on the integration's device triggers, as the automation editor writes them:
each fires the event FIRED with its own data, for the test to count."""

from collections.abc import Iterable
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN

FIRED = "pacerelle_test_fired"


def on_trigger(
    device_id: str, trigger_type: str, event_data: dict[str, Any], **options: Any
) -> dict[str, Any]:
    """One automation: the device trigger `trigger_type` (with `options`, e.g.
    trusted_only), then FIRED with `event_data` (templates of the trigger's event)."""
    trigger = {"trigger": "device", "domain": DOMAIN, "device_id": device_id}
    return {
        "triggers": [{**trigger, "type": trigger_type, **options}],
        "actions": [{"event": FIRED, "event_data": event_data}],
    }


async def automate(hass: HomeAssistant, automations: Iterable[dict[str, Any]]) -> None:
    """Set the automations up, as Home Assistant loads automations.yaml."""
    assert await async_setup_component(hass, "automation", {"automation": list(automations)})
    await hass.async_block_till_done()
