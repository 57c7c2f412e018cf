"""`pacerelle.trust_device` and `pacerelle.block_device`: the trust decision for scripts.

The same decision as the repair flow (repairs.py), bound the same way to the key the user
saw: `verification_code` is the code they compared. Trusting needs it (a key is only
believed once its code was compared); blocking takes it optionally (blocking never gives
anything away): without it, the block covers the key the device presents at that moment,
and the device stays blocked whatever key it presents later. A code that is not the one of
the device's current key (the relay swapped the key, or a typo) is a translated error and
decides nothing. Both return the device's state and the code it was decided for.
`person_id` defaults to the agent's owner.
"""

from typing import Any, Final

import probatio
from homeassistant.core import ServiceCall, ServiceResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv

from ..client import KeyChangedError, TrustState
from ..const import CONF_OWNER_ID, DOMAIN
from ..device import agent_name
from ..errors import action_error
from .common import AGENT_FIELDS, resolve_entry

ATTR_PERSON_ID: Final = "person_id"
ATTR_SENDER_DEVICE_ID: Final = "sender_device_id"
ATTR_VERIFICATION_CODE: Final = "verification_code"

_DEVICE_FIELDS: Final[dict[Any, Any]] = {
    **AGENT_FIELDS,
    probatio.Optional(ATTR_PERSON_ID): cv.string,
    probatio.Required(ATTR_SENDER_DEVICE_ID): cv.string,
}
TRUST_SCHEMA: Final = probatio.Schema(
    {**_DEVICE_FIELDS, probatio.Required(ATTR_VERIFICATION_CODE): cv.string}
)
BLOCK_SCHEMA: Final = probatio.Schema(
    {**_DEVICE_FIELDS, probatio.Optional(ATTR_VERIFICATION_CODE): cv.string}
)


async def async_trust_device(call: ServiceCall) -> ServiceResponse:
    return await _decide(call, TrustState.TRUSTED)


async def async_block_device(call: ServiceCall) -> ServiceResponse:
    return await _decide(call, TrustState.BLOCKED)


async def _decide(call: ServiceCall, state: TrustState) -> dict[str, Any]:
    entry = resolve_entry(call.hass, call)
    person = str(call.data.get(ATTR_PERSON_ID) or entry.data[CONF_OWNER_ID])
    device_id = str(call.data[ATTR_SENDER_DEVICE_ID])
    trust = entry.runtime_data.trust
    device = trust.book.get(person, device_id)
    names = {"agent_name": agent_name(entry), "person": person, "device": device_id}
    if device is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_sender_device",
            translation_placeholders=names,
        )
    typed = call.data.get(ATTR_VERIFICATION_CODE)
    if typed is not None and not device.shows_code(typed):
        raise _mismatch(names)
    try:
        decided = await trust.async_decide(person, device_id, state, key=device.identity_key)
    except KeyChangedError as changed:  # nothing decided: shown with the code it presents now
        raise action_error(changed, agent_name=names["agent_name"]) from None
    return {
        ATTR_PERSON_ID: person,
        ATTR_SENDER_DEVICE_ID: device_id,
        "trust_state": decided.state.value,
        ATTR_VERIFICATION_CODE: decided.code,
    }


def _mismatch(names: dict[str, str]) -> ServiceValidationError:
    """Nothing decided: the device presents another code than the one compared. The right
    code is not told: a caller that could read it here would need no comparison at all."""
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key="verification_code_mismatch",
        translation_placeholders=names,
    )
