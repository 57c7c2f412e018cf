"""A voice note recorded on the chat page turns the demo's kitchen light on (issue 29).

Headless Chromium's fake microphone plays tests/data/voice/turn_on_the_kitchen_light.wav
(flite's voice; made by make_spoken_commands.py) once. The person presses Record on the
chat page and stops it after the sentence; the WebM/Opus note reaches a real agent in Home
Assistant (the test harness) set up with the demo's configuration, whose voice option is
"Preferred voice assistant" with a spoken answer: the demo's PocketSphinx hears the
command, Assist turns light.kitchen_light on, and the page shows Assist's answer with the
demo's eSpeak NG saying it, in a player that plays (its duration read). Screenshots:
tests/artifacts/browser/demo_voice/<run>/; with PACERELLE_PUBLISH_IMAGES=1 the answer is
README's voice image.
"""

from collections.abc import AsyncIterator
from typing import Final

import pytest
from homeassistant.components.assist_pipeline import OPTION_PREFERRED
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from playwright.async_api import Browser, async_playwright, expect
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.options import (
    CONF_ASSIST_AGENT,
    CONF_VOICE_PIPELINE,
    CONF_VOICE_SPOKEN_ANSWER,
)
from tests.browser.chromium import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    STEP_TIMEOUT_MS,
    PageProblems,
    Screenshots,
)
from tests.helpers.agent import start_agent
from tests.helpers.demo_speech import KITCHEN_LIGHT, SPOKEN, async_demo_voice
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.voice import received_audio

NOTE: Final = (
    SPOKEN / "turn_on_the_kitchen_light.wav"
)  # 3.1 s: 0.5 s of silence, 1.6 s of speech, 1 s
# The microphone plays the file once (%noloop) from the moment the page opens it; the
# recording stops in the trailing silence.
FAKE_MICROPHONE_FLAGS: Final = [
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
    f"--use-file-for-fake-audio-capture={NOTE}%noloop",
]
RECORDING_MS: Final = 3_000
HEARD_WITHIN: Final = 60.0  # seconds: conversion, PocketSphinx and Assist on a shared machine


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """This module's Chromium: the shared flags plus a microphone saying the command."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is needed at {CHROMIUM} for the browser tests (scripts/setup)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_FLAGS, *FAKE_MICROPHONE_FLAGS], headless=True
        )
        try:
            yield launched
        finally:
            await launched.close()


async def test_a_recorded_voice_note_turns_the_kitchen_light_on(
    hass: HomeAssistant, emulator: EmulatorHandle, browser: Browser
) -> None:
    await async_demo_voice(hass)
    options = {
        CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT,
        CONF_VOICE_PIPELINE: OPTION_PREFERRED,
        CONF_VOICE_SPOKEN_ANSWER: True,
    }
    installed = (await start_agent(hass, emulator, options=options)).installed
    light = hass.states.get(KITCHEN_LIGHT)
    assert light is not None
    assert light.state != "on"
    events = async_capture_events(hass, EVENT_MESSAGE)
    shots = Screenshots(ARTIFACTS / "demo_voice")
    context = await browser.new_context(
        viewport={"width": 1200, "height": 800}, permissions=["microphone"]
    )
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page = await context.new_page()
    problems = PageProblems(page)
    try:
        await page.goto(emulator.base_url + "/")
        await page.locator("#agents li", has_text=installed.agent_id).get_by_role("link").click()

        await page.locator("#record").click()
        await expect(page.locator("#record")).to_have_text("■ Stop")
        await page.wait_for_timeout(RECORDING_MS)  # the length of the note, not a wait for it
        await page.locator("#record").click()
        await expect(page.locator(".bubble.out .voice-note")).to_have_count(1)

        def light_on() -> bool:
            state = hass.states.get(KITCHEN_LIGHT)
            return state is not None and state.state == "on"

        await wait_until(light_on, within=HEARD_WITHIN)
        answer = page.locator(".bubble.in", has_text="Turned on the light")
        await expect(answer).to_have_count(1, timeout=int(HEARD_WITHIN * 1000))
        [reply] = await emulator.wait_inbox(installed.conversation_id, 1)
        [spoken] = await received_audio(emulator, installed.conversation_id)
        assert (spoken.text, spoken.mime) == ("Turned on the light", "audio/mpeg")
        [event] = [e for e in events if e.data["message_id"] == reply["reply_to_message_id"]]
        assert event.data["transcript"] == "turn on the kitchen light"
        assert event.data["attachments"][0]["mime"] == "audio/webm"
        # The spoken answer, in the same bubble: Chromium reads its length from the MP3.
        player = answer.locator(".voice-note audio")
        await expect(player).to_have_count(1)
        await page.wait_for_function(
            "node => node.readyState >= 1 && Number.isFinite(node.duration) && node.duration > 0.5",
            arg=await player.element_handle(),
        )
        await shots.take(page, "answered")
    finally:
        await context.close()
    assert problems.seen == []
    shots.publish({"answered": "voice-1-demo-spoken-answer.png"})
