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
from tests.helpers.agent import Agent, start_agent
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


class AnyLanguageAgent(conversation.AbstractConversationAgent):
    """A conversation agent of a test, for every language."""

    @property
    def supported_languages(self) -> Literal["*"]:
        return MATCH_ALL


def spoken(
    user_input: conversation.ConversationInput, speech: str
) -> conversation.ConversationResult:
    """The answer `speech` to `user_input`."""
    response = intent.IntentResponse(language=user_input.language)
    response.async_set_speech(speech)
    return conversation.ConversationResult(response, user_input.conversation_id)


class GatedAgent(AnyLanguageAgent):
    """Answers once the test opens the gate."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.gate = asyncio.Event()

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        self.asked.set()
        await self.gate.wait()
        return spoken(user_input, "Done, once you were back.")


class ScriptedAgent(AnyLanguageAgent):
    """Answers with the next of its scripted speeches ("" is an answer with no text)."""

    def __init__(self, speeches: list[str]) -> None:
        self.speeches = speeches
        self.asked: list[str] = []

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        self.asked.append(user_input.text)
        return spoken(user_input, self.speeches.pop(0))


def model_of(
    hass: HomeAssistant, agent: conversation.AbstractConversationAgent, title: str
) -> MockConfigEntry:
    """`agent` set as the conversation agent of a config entry of its own (a "model")."""
    model = MockConfigEntry(domain="test", title=title)
    model.add_to_hass(hass)
    conversation.async_set_agent(hass, model, agent)
    return model


async def assisted_by(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    agent: conversation.AbstractConversationAgent,
    title: str,
) -> Agent:
    """A Pacerelle agent whose Assist bridge answers through `agent` (Assist set up first)."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    model = model_of(hass, agent, title)
    return await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: model.entry_id})


async def scripted(
    hass: HomeAssistant, emulator: EmulatorHandle, speeches: list[str]
) -> tuple[Any, PacerelleRuntime, ScriptedAgent]:
    """Assist answers with `speeches`, one a message; (installed, runtime, the agent)."""
    agent = ScriptedAgent(speeches)
    started = await assisted_by(hass, emulator, agent, "Scripted model")
    return started.installed, started.runtime, agent


async def answered(emulator: EmulatorHandle, installed: Installed, count: int) -> dict[str, object]:
    """The newest of `count` messages the owner's device received."""
    return (await emulator.wait_inbox(installed.conversation_id, count, within=20))[count - 1]
