"""The demo's offline speech-to-text (scripts/lib/demo/pacerelle_demo/stt.py) for real:
PocketSphinx hears spoken commands (WAVs made by flite, tests/data/voice/) through Home
Assistant's speech-to-text API, gives nothing for silence, becomes the preferred voice
assistant's engine, and a voice note said to the agent turns the kitchen light on and puts
milk on the shopping list, with the agent's voice option on "Preferred voice assistant",
through Assist and through the README's shopping-list automation."""

import io
import wave
from typing import Any

import pytest
from homeassistant.components.assist_pipeline import OPTION_PREFERRED, async_update_pipeline
from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.options import (
    CONF_ASSIST_AGENT,
    CONF_VOICE_PIPELINE,
    CONF_VOICE_TRANSCRIPTS,
)
from tests.helpers.agent import start_agent
from tests.helpers.demo_speech import ENGINE, KITCHEN_LIGHT, async_demo_voice, spoken
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.readme import automate, example
from tests.helpers.runtime import wait_until
from tests.helpers.voice import send_voice_note

SPEECH_HEADER = "format=wav; codec=pcm; sample_rate=16000; bit_rate=16; channel=1; language=en-US"
SHOPPING_LIST = "todo.shopping_list"
HEARD_WITHIN = 30.0  # seconds: decoding is ~0.1 s, a shared 2-core machine is slow


def _silence(seconds: float) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(bytes(int(seconds * 16000) * 2))
    return out.getvalue()


@pytest.fixture
async def demo(hass: HomeAssistant) -> None:
    await async_demo_voice(hass)


@pytest.mark.usefixtures("demo")
@pytest.mark.parametrize(
    ("note", "heard"),
    [
        ("turn_on_the_kitchen_light.wav", "turn on the kitchen light"),
        ("add_milk_to_the_shopping_list.wav", "add milk to the shopping list"),
    ],
)
async def test_the_stt_api_hears_the_demo_commands(
    hass_client: Any, hass: HomeAssistant, note: str, heard: str
) -> None:
    client = await hass_client()
    audio = await hass.async_add_executor_job(spoken, note)
    response = await client.post(
        f"/api/stt/{ENGINE}", data=audio, headers={"X-Speech-Content": SPEECH_HEADER}
    )
    assert response.status == 200
    assert await response.json() == {"text": heard, "result": "success"}


@pytest.mark.usefixtures("demo")
async def test_silence_is_heard_as_nothing(hass_client: Any) -> None:
    client = await hass_client()
    response = await client.post(
        f"/api/stt/{ENGINE}", data=_silence(2.0), headers={"X-Speech-Content": SPEECH_HEADER}
    )
    assert response.status == 200
    assert await response.json() == {"text": None, "result": "error"}


@pytest.mark.usefixtures("demo")
async def test_the_preferred_voice_assistant_hears_with_the_demo(hass: HomeAssistant) -> None:
    pipeline = async_get_pipeline(hass)
    assert (pipeline.stt_engine, pipeline.stt_language) == (ENGINE, "en-US")


@pytest.mark.parametrize(
    ("engine", "language", "after"),
    [(None, None, (ENGINE, "en-US")), ("stt.elsewhere", "en", ("stt.elsewhere", "en"))],
)
async def test_a_voice_assistant_made_before_the_demo_hears_with_it_unless_it_has_an_engine(
    hass: HomeAssistant, engine: str | None, language: str | None, after: tuple[str, str]
) -> None:
    # As at a first start where Assist comes up before the demo's engine is loaded.
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "assist_pipeline", {})
    await async_update_pipeline(
        hass, async_get_pipeline(hass), stt_engine=engine, stt_language=language
    )
    await async_demo_voice(hass)
    pipeline = async_get_pipeline(hass)
    assert (pipeline.stt_engine, pipeline.stt_language) == after


@pytest.mark.usefixtures("demo")
async def test_said_to_the_agent_the_light_turns_on_and_milk_is_listed(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    options = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_VOICE_PIPELINE: OPTION_PREFERRED}
    installed = (await start_agent(hass, emulator, options=options)).installed
    conversation = installed.conversation_id
    assert _state(hass, KITCHEN_LIGHT) != "on"
    light = await hass.async_add_executor_job(spoken, "turn_on_the_kitchen_light.wav")
    light_id = await send_voice_note(emulator, conversation, light, "audio/wav")
    await wait_until(lambda: _state(hass, KITCHEN_LIGHT) == "on", within=HEARD_WITHIN)

    milk = await hass.async_add_executor_job(spoken, "add_milk_to_the_shopping_list.wav")
    milk_id = await send_voice_note(emulator, conversation, milk, "audio/wav")
    await wait_until(lambda: _state(hass, SHOPPING_LIST) == "1", within=HEARD_WITHIN)
    listed: Any = await hass.services.async_call(
        "todo", "get_items", {"entity_id": SHOPPING_LIST}, blocking=True, return_response=True
    )
    assert [item["summary"] for item in listed[SHOPPING_LIST]["items"]] == ["Milk"]

    replies = await emulator.wait_inbox(conversation, 2, within=HEARD_WITHIN)
    answers = {reply["reply_to_message_id"]: reply["text"] for reply in replies}
    assert answers == {light_id: "Turned on the light", milk_id: "Added milk"}


@pytest.mark.usefixtures("demo")
async def test_the_readme_shopping_list_hears_the_demos_phrase(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    options = {CONF_VOICE_PIPELINE: OPTION_PREFERRED, CONF_VOICE_TRANSCRIPTS: True}
    installed = (await start_agent(hass, emulator, options=options)).installed
    await automate(hass, example("A shopping list filled by voice"))
    milk = await hass.async_add_executor_job(spoken, "add_milk_to_the_shopping_list.wav")
    milk_id = await send_voice_note(emulator, installed.conversation_id, milk, "audio/wav")

    [reply] = await emulator.wait_inbox(installed.conversation_id, 1, within=HEARD_WITHIN)
    assert (reply["text"], reply["reply_to_message_id"]) == (
        "Added milk to the shopping list.",
        milk_id,
    )
    listed: Any = await hass.services.async_call(
        "todo", "get_items", {"entity_id": SHOPPING_LIST}, blocking=True, return_response=True
    )
    assert [item["summary"] for item in listed[SHOPPING_LIST]["items"]] == ["milk"]


def _state(hass: HomeAssistant, entity_id: str) -> str | None:
    state = hass.states.get(entity_id)
    return None if state is None else state.state
