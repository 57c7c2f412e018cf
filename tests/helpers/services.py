"""Helpers to call an agent's actions and to find what the person and the agent exchanged."""

from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import Agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until


async def human_writes(emulator: EmulatorHandle, agent: Agent, **body: Any) -> dict[str, Any]:
    """The person sends something; the pacerelle_message event it fired."""
    message_id = await emulator.send(agent.conversation_id, **body)
    return await event_of(agent, message_id)


async def event_of(agent: Agent, message_id: str, within: float = 10.0) -> dict[str, Any]:
    """The data of the `pacerelle_message` event of `message_id`, once it fired (whatever
    else fired before or after it: only the order the product promises is asserted)."""

    def found() -> dict[str, Any] | None:
        return next((e.data for e in agent.events if e.data["message_id"] == message_id), None)

    await wait_until(lambda: found() is not None, within=within)
    data = found()
    assert data is not None
    return data


async def call(
    hass: HomeAssistant, service: str, data: dict[str, Any], *, response: bool = True
) -> Any:
    return await hass.services.async_call(
        DOMAIN, service, data, blocking=True, return_response=response
    )


def stored_attachment(agent: Agent, message_id: str, index: int = 0) -> dict[str, Any]:
    """The client's own copy of a received attachment (with its blob id and key), which the
    Home Assistant side is never given: for tests that make the relay fail one blob."""
    request = agent.runtime.agent.data.inbox.pending[message_id]
    return dict(request.attachments[index])


def shown_code(emulator: EmulatorHandle, person_id: str, device_id: str) -> str:
    """The verification code the person's app shows for that device (what the user compares)."""
    return str(
        emulator.emulator.humans.device(person_id, device_id).describe()["verification_code"]
    )


async def trust(
    hass: HomeAssistant, emulator: EmulatorHandle, person_id: str, device_id: str
) -> Any:
    """`pacerelle.trust_device` as a user who compared the device's code with the app's."""
    data = {
        "person_id": person_id,
        "sender_device_id": device_id,
        "verification_code": shown_code(emulator, person_id, device_id),
    }
    return await call(hass, "trust_device", data)


async def refused(
    hass: HomeAssistant, service: str, data: dict[str, Any], key: str, *, response: bool = False
) -> HomeAssistantError:
    """The call fails with the translated error `key`; the error, for its placeholders."""
    with pytest.raises(HomeAssistantError) as caught:
        await call(hass, service, data, response=response)
    assert caught.value.translation_key == key, caught.value
    return caught.value


async def received(emulator: EmulatorHandle, agent: Agent, count: int) -> list[dict[str, Any]]:
    """What the person's devices received, once there are `count` messages."""
    return await emulator.wait_inbox(agent.conversation_id, count)
