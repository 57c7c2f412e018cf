"""Assist with a light to switch: the `kitchen_light` fixture (a plugin of tests/conftest.py);
a conversation agent that answers when the test lets it."""

import asyncio
from typing import Literal

import pytest
from homeassistant.components import conversation
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.setup import async_setup_component

KITCHEN = "light.kitchen_light"


@pytest.fixture
async def kitchen_light(hass: HomeAssistant) -> None:
    """Assist and a "Kitchen light" (a template light over an input boolean)."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"kitchen_power": {"name": "Relay 7"}}}
    )
    power = {"entity_id": "input_boolean.kitchen_power"}
    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "light": [
                        {
                            "name": "Kitchen light",
                            "state": "{{ is_state('input_boolean.kitchen_power', 'on') }}",
                            "turn_on": [{"action": "input_boolean.turn_on", "target": power}],
                            "turn_off": [{"action": "input_boolean.turn_off", "target": power}],
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()
    assert hass.states.get(KITCHEN).state == "off"


def light_state(hass: HomeAssistant) -> str:
    light = hass.states.get(KITCHEN)
    assert light is not None
    return light.state


class GatedAgent(conversation.AbstractConversationAgent):
    """Answers once the test opens the gate."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.gate = asyncio.Event()

    @property
    def supported_languages(self) -> Literal["*"]:
        return MATCH_ALL

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        self.asked.set()
        await self.gate.wait()
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech("Done, once you were back.")
        return conversation.ConversationResult(response, user_input.conversation_id)
