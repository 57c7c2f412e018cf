"""Device triggers of an agent: "a message is received", "a widget is answered".

They are the `pacerelle_message` and `pacerelle_widget_response` events of the device's
agent, offered in the automation editor; `trigger.event.data` holds the event's data
(events.py). They follow the agent's own events (signals.py), not the bus: a bus event
anyone fired with the agent's entry id triggers nothing here. A widget answer is not also
"a message is received": it has its own trigger.

"From a trusted device only" (`trusted_only`) is offered on, as the default of every new
automation: a device that Home Assistant does not trust (trust.py) then does not trigger
it. Automations saved before the option existed lack it and keep firing for every device.

A named conversation's device (device.py) offers the same triggers, for that
conversation's messages only; the agent's device keeps them for every message.
"""

from typing import Any, Final

import probatio
from homeassistant.components.device_automation import DEVICE_TRIGGER_BASE_SCHEMA
from homeassistant.const import CONF_DEVICE_ID, CONF_DOMAIN, CONF_PLATFORM, CONF_TYPE
from homeassistant.core import CALLBACK_TYPE, Event, HassJob, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.trigger import TriggerActionType, TriggerInfo
from homeassistant.helpers.typing import ConfigType

from .const import DOMAIN
from .device import conversation_of
from .events import EVENT_MESSAGE, EVENT_WIDGET_RESPONSE
from .signals import event_signal

TRIGGER_MESSAGE_RECEIVED: Final = "message_received"
TRIGGER_WIDGET_ANSWERED: Final = "widget_answered"
TRIGGER_EVENTS: Final = {
    TRIGGER_MESSAGE_RECEIVED: EVENT_MESSAGE,
    TRIGGER_WIDGET_ANSWERED: EVENT_WIDGET_RESPONSE,
}

CONF_TRUSTED_ONLY: Final = "trusted_only"

TRIGGER_SCHEMA: Final = DEVICE_TRIGGER_BASE_SCHEMA.extend(
    {
        probatio.Required(CONF_TYPE): probatio.In(tuple(TRIGGER_EVENTS)),
        probatio.Optional(CONF_TRUSTED_ONLY, default=False): bool,
    }
)


def agent_entry_ids(hass: HomeAssistant, device_id: str) -> set[str]:
    """The Pacerelle config entries behind a device (none for any other device)."""
    device = dr.async_get(hass).async_get(device_id)
    if device is None:
        return set()
    ours = {entry.entry_id for entry in hass.config_entries.async_entries(DOMAIN)}
    # A device belongs to one entry (config_entries is deprecated since 2026.10).
    return ours & {device.config_entry_id}


def conversation_scope(hass: HomeAssistant, device_id: str) -> str | None:
    """The conversation a named conversation's device stands for (None: an agent's device,
    which stands for all of its conversations)."""
    device = dr.async_get(hass).async_get(device_id)
    return None if device is None else conversation_of(device)


async def async_get_triggers(hass: HomeAssistant, device_id: str) -> list[dict[str, Any]]:
    if not agent_entry_ids(hass, device_id):
        return []
    return [
        {
            CONF_PLATFORM: "device",
            CONF_DOMAIN: DOMAIN,
            CONF_DEVICE_ID: device_id,
            CONF_TYPE: trigger_type,
        }
        for trigger_type in TRIGGER_EVENTS
    ]


async def async_get_trigger_capabilities(
    hass: HomeAssistant, config: ConfigType
) -> dict[str, probatio.Schema]:
    """The trust filter, on by default in the automation editor."""
    return {
        "extra_fields": probatio.Schema({probatio.Optional(CONF_TRUSTED_ONLY, default=True): bool})
    }


async def async_attach_trigger(
    hass: HomeAssistant,
    config: ConfigType,
    action: TriggerActionType,
    trigger_info: TriggerInfo,
) -> CALLBACK_TYPE:
    trigger_type: str = config[CONF_TYPE]
    device_id: str = config[CONF_DEVICE_ID]
    trigger_data = trigger_info["trigger_data"]
    trusted_only: bool = config.get(CONF_TRUSTED_ONLY, False)
    job = HassJob(action, f"pacerelle device trigger {trigger_type}")

    event_type = TRIGGER_EVENTS[trigger_type]
    # Read when attached: a device stands for one conversation for as long as it exists.
    scope = conversation_scope(hass, device_id)

    @callback
    def matches(data: dict[str, Any]) -> bool:
        if scope is not None and data.get("conversation_id") != scope:
            return False
        if trigger_type == TRIGGER_MESSAGE_RECEIVED and data.get("widget_response") is not None:
            return False
        return not trusted_only or data.get("trusted") is True

    @callback
    def fire(event: Event[dict[str, Any]]) -> None:
        if event.event_type != event_type or not matches(event.data):
            return
        hass.async_run_hass_job(
            job,
            {
                "trigger": {
                    **trigger_data,
                    **config,
                    "event": event,
                    "description": f"Pacerelle {trigger_type.replace('_', ' ')}",
                }
            },
            event.context,
        )

    # The agent's own events (signals.py), never the bus: anyone may fire a bus event.
    # The entry id stays across reloads, so the device keeps working when set up again.
    stops = [
        async_dispatcher_connect(hass, event_signal(entry_id), fire)
        for entry_id in agent_entry_ids(hass, device_id)
    ]

    @callback
    def detach() -> None:
        for stop in stops:
            stop()

    return detach
