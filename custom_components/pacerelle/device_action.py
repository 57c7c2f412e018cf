"""Device actions of an agent: trust or block a device of someone who writes to it.

The device page's way to the trust decision (the repair flow and the actions
`pacerelle.trust_device`/`block_device` are the others): each runs the action of the same
name for the agent of this device, with the same fields: trusting needs the verification
code compared (shown in the repair), blocking takes it optionally (actions/trust.py).

They are offered on the agent's own device only (device.py: `is_agent_device`): a trust
decision is the agent's, about a person's device, whichever conversation it writes in. A
named conversation's device offers none, and an action saved with one's id is refused
(translated, nothing decided).
"""

from typing import Any, Final

import probatio
from homeassistant.const import CONF_DEVICE_ID, CONF_DOMAIN, CONF_TYPE
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.typing import ConfigType, TemplateVarsType

from .actions.trust import ATTR_PERSON_ID, ATTR_SENDER_DEVICE_ID, ATTR_VERIFICATION_CODE
from .const import DOMAIN
from .device import is_agent_device
from .device_trigger import agent_entry_ids

TRUST_DEVICE: Final = "trust_device"
ACTION_TYPES: Final = (TRUST_DEVICE, "block_device")
_FIELDS: Final = {
    probatio.Required(ATTR_SENDER_DEVICE_ID): cv.string,
    probatio.Optional(ATTR_PERSON_ID): cv.string,
}


def _fields(action_type: str) -> dict[Any, Any]:
    """The action's own fields: the code is required to trust, optional to block."""
    code = probatio.Required if action_type == TRUST_DEVICE else probatio.Optional
    return {**_FIELDS, code(ATTR_VERIFICATION_CODE): cv.string}


def _code_to_trust(config: dict[str, Any]) -> dict[str, Any]:
    if config[CONF_TYPE] == TRUST_DEVICE and ATTR_VERIFICATION_CODE not in config:
        raise probatio.Invalid("trusting a device needs its verification code")
    return config


ACTION_SCHEMA: Final = probatio.All(
    cv.DEVICE_ACTION_BASE_SCHEMA.extend(
        {probatio.Required(CONF_TYPE): probatio.In(ACTION_TYPES), **_fields("block_device")}
    ),
    _code_to_trust,
)


def _on_agent_device(hass: HomeAssistant, device_id: str) -> bool:
    """Whether the device is a Pacerelle agent's own device (device.py's one rule)."""
    device = dr.async_get(hass).async_get(device_id)
    return device is not None and bool(agent_entry_ids(hass, device_id)) and is_agent_device(device)


async def async_get_actions(hass: HomeAssistant, device_id: str) -> list[dict[str, Any]]:
    if not _on_agent_device(hass, device_id):
        return []
    return [
        {CONF_DEVICE_ID: device_id, CONF_DOMAIN: DOMAIN, CONF_TYPE: action_type}
        for action_type in ACTION_TYPES
    ]


async def async_get_action_capabilities(
    hass: HomeAssistant, config: ConfigType
) -> dict[str, probatio.Schema]:
    return {"extra_fields": probatio.Schema(_fields(str(config.get(CONF_TYPE))))}


async def async_call_action_from_config(
    hass: HomeAssistant, config: ConfigType, variables: TemplateVarsType, context: Context | None
) -> None:
    if not _on_agent_device(hass, config[CONF_DEVICE_ID]):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="not_agent_device",
            translation_placeholders={"device_id": config[CONF_DEVICE_ID]},
        )
    data = {
        CONF_DEVICE_ID: config[CONF_DEVICE_ID],
        ATTR_SENDER_DEVICE_ID: config[ATTR_SENDER_DEVICE_ID],
    }
    for optional in (ATTR_PERSON_ID, ATTR_VERIFICATION_CODE):
        if optional in config:
            data[optional] = config[optional]
    await hass.services.async_call(DOMAIN, config[CONF_TYPE], data, blocking=True, context=context)
