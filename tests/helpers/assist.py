"""Assist with a light to switch: the `kitchen_light` fixture (a plugin of tests/conftest.py);
conversation agents that answer when the test lets them or as scripted, and the answers the
owner's device received."""

import asyncio
from typing import Any, Literal

import pytest
from homeassistant.components import conversation
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle, Installed

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


class ScriptedAgent(conversation.AbstractConversationAgent):
    """Answers with the next of its scripted speeches ("" is an answer with no text)."""

    def __init__(self, speeches: list[str]) -> None:
        self.speeches = speeches
        self.asked: list[str] = []

    @property
    def supported_languages(self) -> Literal["*"]:
        return MATCH_ALL

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        self.asked.append(user_input.text)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech(self.speeches.pop(0))
        return conversation.ConversationResult(response, user_input.conversation_id)


async def scripted(
    hass: HomeAssistant, emulator: EmulatorHandle, speeches: list[str]
) -> tuple[Any, PacerelleRuntime, ScriptedAgent]:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    model = MockConfigEntry(domain="test", title="Scripted model")
    model.add_to_hass(hass)
    agent = ScriptedAgent(speeches)
    conversation.async_set_agent(hass, model, agent)
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: model.entry_id})
    installed, entry = started.installed, started.entry
    return installed, entry.runtime_data, agent


async def answered(emulator: EmulatorHandle, installed: Installed, count: int) -> dict[str, object]:
    """The newest of `count` messages the owner's device received."""
    return (await emulator.wait_inbox(installed.conversation_id, count, within=20))[count - 1]
