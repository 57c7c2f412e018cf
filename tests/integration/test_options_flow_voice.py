"""The voice assistant option through the frontend's options API, and what a person is told
when the chosen voice assistant cannot listen (issue 29: voice in the demo)."""

import logging
from typing import Any

import pytest
from homeassistant.components.assist_pipeline import OPTION_PREFERRED
from homeassistant.components.assist_pipeline.pipeline import (
    KEY_ASSIST_PIPELINE,
    async_update_pipeline,
)
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.const import CONF_CONVERSATION_ID
from custom_components.pacerelle.options import CONF_ASSIST_AGENT, CONF_VOICE_PIPELINE
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.options_flow import (
    OPTIONS_API,
    installed_entry,
    open_options,
    submit_options,
    suggested,
)
from tests.helpers.runtime import wait_until
from tests.helpers.voice import send_voice_note
from tests.helpers.voice_assist import VoiceAssistant, async_voice_assistant, wav_note

pytest_plugins = ["tests.helpers.config_flow_fixtures"]

ANSWER = "Turned on the light"


@pytest.fixture
async def voice(hass: HomeAssistant) -> VoiceAssistant:
    """Set up before the flow driver: the HTTP router is frozen once a client is served."""
    return await async_voice_assistant(hass)


async def _save(driver: FlowDriver, entry: ConfigEntry, **chosen: Any) -> dict[str, Any]:
    """Open the options, check the voice list, save `chosen` as the frontend sends it."""
    form = await open_options(driver, entry)
    body = dict(chosen)
    result = await submit_options(driver, form, body)
    await driver.hass.async_block_till_done()
    return result


def _voice_field(form: dict[str, Any]) -> dict[str, Any]:
    [field] = [f for f in form["data_schema"] if f["name"] == CONF_VOICE_PIPELINE]
    return field


@pytest.mark.usefixtures("kitchen_light")
async def test_preferred_is_kept_and_answers_a_voice_note(
    hass: HomeAssistant, voice: VoiceAssistant, driver: FlowDriver
) -> None:
    hass.data[KEY_ASSIST_PIPELINE].pipeline_store.async_set_preferred_item(voice.pipeline.id)
    entry = await installed_entry(hass, driver)
    form = await open_options(driver, entry)
    # "No voice" is a choice of its own, shown as chosen for an entry without the option.
    select = _voice_field(form)["selector"]["select"]
    assert [o["value"] for o in select["options"]][:2] == ["none", "preferred"]
    assert {"value": voice.pipeline.id, "label": "Voice"} in select["options"]
    assert select["translation_key"] == CONF_VOICE_PIPELINE
    assert suggested(form)[CONF_VOICE_PIPELINE] == "none"

    chosen = {
        CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT,
        CONF_VOICE_PIPELINE: "preferred",
    }
    result = await submit_options(driver, form, chosen)
    assert result["type"] == "create_entry"
    assert entry.options[CONF_VOICE_PIPELINE] == OPTION_PREFERRED
    await hass.async_block_till_done()
    form = await open_options(driver, entry)
    assert suggested(form)[CONF_VOICE_PIPELINE] == "preferred"

    # And it works: a voice note is transcribed by the preferred assistant and answered.
    conversation = str(entry.data[CONF_CONVERSATION_ID])
    await wait_until(lambda: entry.runtime_data.status.state.value == "connected")
    note, _ = wav_note(0.5)
    await send_voice_note(driver.emulator, conversation, note, "audio/wav", duration_ms=500)
    [reply] = await driver.emulator.wait_inbox(conversation, 1, within=10)
    assert reply["text"] == ANSWER
    assert hass.states.get(KITCHEN).state == "on"


async def test_no_voice_and_a_chosen_pipeline_are_saved_as_chosen(
    hass: HomeAssistant, voice: VoiceAssistant, driver: FlowDriver
) -> None:
    entry = await installed_entry(hass, driver)
    assert (await _save(driver, entry, voice_pipeline=voice.pipeline.id))["type"] == (
        "create_entry"
    )
    assert entry.options[CONF_VOICE_PIPELINE] == voice.pipeline.id
    assert (await _save(driver, entry, voice_pipeline="none"))["type"] == "create_entry"
    assert entry.options[CONF_VOICE_PIPELINE] is None
    # A client that leaves the field out (an emptied field) saves no voice either.
    await _save(driver, entry, voice_pipeline="preferred")
    assert (await _save(driver, entry))["type"] == "create_entry"
    assert entry.options[CONF_VOICE_PIPELINE] is None


async def test_entries_saved_before_keep_their_voice(
    hass: HomeAssistant, voice: VoiceAssistant, driver: FlowDriver
) -> None:
    """The stored values did not change: an id stays that pipeline, none stays none,
    and a pipeline deleted since stays listed (saving unchanged keeps it)."""
    entry = await installed_entry(hass, driver)
    for stored, shown in (
        (voice.pipeline.id, voice.pipeline.id),
        ("01GONEPIPELINE", "01GONEPIPELINE"),
        (None, "none"),
    ):
        hass.config_entries.async_update_entry(
            entry, options={**entry.options, CONF_VOICE_PIPELINE: stored}
        )
        form = await open_options(driver, entry)
        assert suggested(form)[CONF_VOICE_PIPELINE] == shown
        values = [o["value"] for o in _voice_field(form)["selector"]["select"]["options"]]
        assert shown in values
        await driver.request("DELETE", f"{OPTIONS_API}/{form['flow_id']}")
    await hass.async_block_till_done()


@pytest.mark.usefixtures("kitchen_light")
@pytest.mark.parametrize("engine", [None, "stt.not_loaded"])
async def test_a_voice_assistant_without_speech_to_text_is_named(
    hass: HomeAssistant,
    emulator: Any,
    voice: VoiceAssistant,
    caplog: pytest.LogCaptureFixture,
    engine: str | None,
) -> None:
    """No engine at all (the demo's default assistant), or one that is not loaded: the
    person and the log name the voice assistant and say it has no speech-to-text."""
    await async_update_pipeline(hass, voice.pipeline, stt_engine=engine)
    options = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_VOICE_PIPELINE: voice.pipeline.id}
    installed = (await start_agent(hass, emulator, options=options)).installed
    note, _ = wav_note(0.5)
    caplog.set_level(logging.WARNING, logger="custom_components.pacerelle")
    await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    [told] = await emulator.wait_inbox(installed.conversation_id, 1, within=10)
    assert told["text"].startswith(
        'The voice assistant "Voice" chosen for voice notes has no working speech-to-text'
    )
    assert voice.stt.calls == []
    logged = [r.getMessage() for r in caplog.records if "speech-to-text" in r.getMessage()]
    assert logged, caplog.text
    assert "'Voice'" in logged[0]
    assert ("has no speech-to-text engine" if engine is None else "stt-provider-missing") in (
        logged[0]
    )
    assert hass.states.get(KITCHEN).state == "off"
