"""Device actions: send a message from a device's page, and trust or block a device.

`send_message` (its `text` a template) runs `pacerelle.send_message` with the caller's
context: on the agent's device into the owner's conversation, on a named conversation's
device into that conversation (its notify entity, so the caller's permission on it holds).
Trusting and blocking run the action of the same name for the agent of this device, with the
same fields: trusting needs the verification code compared (shown in the repair), blocking
takes it optionally (actions/trust.py). They are offered on the agent's own device only
(device.py: `is_agent_device`): a trust decision is the agent's, about a person's device,
whichever conversation it writes in; one saved with another device's id is refused
(translated, nothing decided).
"""

from typing import Any, Final

import probatio
from homeassistant.const import ATTR_ENTITY_ID, CONF_DEVICE_ID, CONF_DOMAIN, CONF_TYPE
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.typing import ConfigType, TemplateVarsType

from .actions.conversation import conversation_entity
from .actions.trust import ATTR_PERSON_ID, ATTR_SENDER_DEVICE_ID, ATTR_VERIFICATION_CODE
from .const import DOMAIN
from .device import conversation_of, is_agent_device
from .device_trigger import agent_entry_ids

SEND_MESSAGE: Final = "send_message"
TRUST_DEVICE: Final = "trust_device"
TRUST_TYPES: Final = (TRUST_DEVICE, "block_device")
ACTION_TYPES: Final = (SEND_MESSAGE, *TRUST_TYPES)
ATTR_TEXT: Final = "text"
_FIELDS: Final = {
    probatio.Required(ATTR_SENDER_DEVICE_ID): cv.string,
    probatio.Optional(ATTR_PERSON_ID): cv.string,
}


def _fields(action_type: str) -> dict[Any, Any]:
    """The action's own fields: the text to send; for trust, the code is required to trust,
    optional to block."""
    if action_type == SEND_MESSAGE:
        return {probatio.Required(ATTR_TEXT): cv.string}
    code = probatio.Required if action_type == TRUST_DEVICE else probatio.Optional
    return {**_FIELDS, code(ATTR_VERIFICATION_CODE): cv.string}


def _checked(config: dict[str, Any]) -> dict[str, Any]:
    """Each type with its own fields, checked by their schema (the text as a template)."""
    shared = [*cv.DEVICE_ACTION_BASE_SCHEMA.schema, CONF_TYPE]
    base = {key: config[key] for key in shared if key in config}
    own = {key: value for key, value in config.items() if key not in base}
    if config[CONF_TYPE] == SEND_MESSAGE:
        text = probatio.Schema({probatio.Required(ATTR_TEXT): cv.template})(own)
        return {**base, **text}
    if config[CONF_TYPE] == TRUST_DEVICE and ATTR_VERIFICATION_CODE not in own:
        raise probatio.Invalid("trusting a device needs its verification code")
    return {**base, **probatio.Schema(_fields(str(config[CONF_TYPE])))(own)}


ACTION_SCHEMA: Final = probatio.All(
    cv.DEVICE_ACTION_BASE_SCHEMA.extend(
        {probatio.Required(CONF_TYPE): probatio.In(ACTION_TYPES)}, extra=probatio.ALLOW_EXTRA
    ),
    _checked,
)


def _on_agent_device(hass: HomeAssistant, device_id: str) -> bool:
    """Whether the device is a Pacerelle agent's own device (device.py's one rule)."""
    device = dr.async_get(hass).async_get(device_id)
    return device is not None and bool(agent_entry_ids(hass, device_id)) and is_agent_device(device)


def _conversation_entity(hass: HomeAssistant, device_id: str) -> str | None:
    """The notify entity of the named conversation a device of ours stands for, if any."""
    device = dr.async_get(hass).async_get(device_id)
    if device is None or device.config_entry_id is None:
        return None
    entry = hass.config_entries.async_get_entry(device.config_entry_id)
    conversation_id = conversation_of(device)
    if entry is None or entry.domain != DOMAIN or conversation_id is None:
        return None
    return conversation_entity(hass, entry, conversation_id)


async def async_get_actions(hass: HomeAssistant, device_id: str) -> list[dict[str, Any]]:
    if _on_agent_device(hass, device_id):
        types: tuple[str, ...] = ACTION_TYPES
    elif _conversation_entity(hass, device_id) is not None:
        types = (SEND_MESSAGE,)
    else:
        return []
    return [
        {CONF_DEVICE_ID: device_id, CONF_DOMAIN: DOMAIN, CONF_TYPE: action_type}
        for action_type in types
    ]


async def async_get_action_capabilities(
    hass: HomeAssistant, config: ConfigType
) -> dict[str, probatio.Schema]:
    return {"extra_fields": probatio.Schema(_fields(str(config.get(CONF_TYPE))))}


async def async_call_action_from_config(
    hass: HomeAssistant, config: ConfigType, variables: TemplateVarsType, context: Context | None
) -> None:
    if config[CONF_TYPE] == SEND_MESSAGE:
        await _send_message(hass, config, variables, context)
        return
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


async def _send_message(
    hass: HomeAssistant, config: ConfigType, variables: TemplateVarsType, context: Context | None
) -> None:
    """`pacerelle.send_message` into the device's conversation, the text rendered."""
    device_id = config[CONF_DEVICE_ID]
    text = config[ATTR_TEXT]
    text.hass = hass
    data: dict[str, Any] = {ATTR_TEXT: text.async_render(variables, parse_result=False)}
    if _on_agent_device(hass, device_id):
        data[CONF_DEVICE_ID] = device_id
    elif (entity_id := _conversation_entity(hass, device_id)) is not None:
        data[ATTR_ENTITY_ID] = entity_id
    else:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="not_agent_device",
            translation_placeholders={"device_id": device_id},
        )
    await hass.services.async_call(DOMAIN, SEND_MESSAGE, data, blocking=True, context=context)
