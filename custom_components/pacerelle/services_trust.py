"""`pacerelle.trust_device` and `pacerelle.block_device`: the trust decision for scripts.

The same decision as the repair flow (repairs.py), for the device's current identity key.
Both return the device's state and the verification code it was decided for, so a script
can show the code it acted on. `person_id` defaults to the agent's owner.
"""

from typing import Any, Final

import probatio
from homeassistant.core import ServiceCall, ServiceResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv

from .client.trust import TrustState
from .const import CONF_OWNER_ID, DOMAIN
from .services_common import AGENT_FIELDS, agent_name, resolve_entry

ATTR_PERSON_ID: Final = "person_id"
ATTR_SENDER_DEVICE_ID: Final = "sender_device_id"

TRUST_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Optional(ATTR_PERSON_ID): cv.string,
        probatio.Required(ATTR_SENDER_DEVICE_ID): cv.string,
    }
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
    if trust is None or trust.book.get(person, device_id) is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_sender_device",
            translation_placeholders={
                "agent_name": agent_name(entry),
                "person": person,
                "device": device_id,
            },
        )
    decided = await trust.async_decide(person, device_id, state)
    return {
        ATTR_PERSON_ID: person,
        ATTR_SENDER_DEVICE_ID: device_id,
        "trust_state": decided.state.value,
        "verification_code": decided.code,
    }
