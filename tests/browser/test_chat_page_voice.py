"""Voice notes on the chat page (issue 19), in headless Chromium with a real agent behind it.

The person uploads an audio file (Opus in Ogg, made by ffmpeg): it leaves as a voice note
with the duration the page read from the audio, and the agent decrypts the same bytes; a
WAV from the composer's file picker leaves with its caption and duration. Then the person
records one with the page's Record button (Chromium's fake microphone).
The agent answers with a spoken answer: the page shows an <audio> player whose source
loads from the emulator (metadata read, duration > 0). Screenshots go to
tests/artifacts/browser/chat_page_voice/<run>/.
"""

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from playwright.async_api import Browser, async_playwright, expect

from tests.browser.chat_page import next_message
from tests.browser.chromium import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    STEP_TIMEOUT_MS,
    PageProblems,
    Screenshots,
)
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.voice import audio_duration_ms, make_audio

# A fake microphone (a beep) that needs no permission prompt, for the Record button.
FAKE_MICROPHONE_FLAGS = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]
NOTE_SECONDS = 2.2  # shown as 0:02
# What the page may read differently from ffprobe (Opus pre-skip, rounding).
DURATION_SLACK_MS = 60
RECORDING_MS = 600


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """This module's Chromium: the shared flags plus a fake microphone."""
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


async def test_voice_notes_leave_with_their_duration_and_answers_play(
    browser: Browser, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    shots = Screenshots(ARTIFACTS / "chat_page_voice")
    context = await browser.new_context(
        viewport={"width": 1200, "height": 800}, permissions=["microphone"]
    )
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page = await context.new_page()
    problems = PageProblems(page)
    installed = await emulator.install(name="Home Assistant")
    agent = await emulator.agent(installed)
    await agent.connect()
    try:
        note, mime = await make_audio(NOTE_SECONDS, "ogg")
        measured = await audio_duration_ms(note)
        assert measured is not None
        (tmp_path / "kitchen.ogg").write_bytes(note)
        await page.goto(emulator.base_url + "/")
        await page.locator("#agents li", has_text=installed.agent_id).get_by_role("link").click()

        # Upload: a voice note with the duration the page read, the same bytes inside.
        await page.locator("#voice").set_input_files(tmp_path / "kitchen.ogg")
        envelope, plaintext = await next_message(agent)
        [sent] = json.loads(plaintext)["attachments"]
        assert (sent["name"], sent["mime"], sent["size"]) == ("kitchen.ogg", mime, len(note))
        assert abs(sent["duration_ms"] - measured) <= DURATION_SLACK_MS
        assert envelope["attachments"][0]["mime"] == "application/octet-stream"
        async with emulator.session.get(
            f"{emulator.base_url}/agent/blobs/{sent['blob_id']}",
            headers={"Authorization": f"Bearer {agent.token}"},
        ) as response:
            sealed = await response.read()
        key, iv = base64.b64decode(sent["key_b64"]), base64.b64decode(sent["iv_b64"])
        assert AESGCM(key).decrypt(iv, sealed, None) == note
        mine = page.locator(".bubble.out .voice-note")
        await expect(mine).to_contain_text("Voice note · 0:02")
        await shots.take(page, "uploaded")

        # An audio file of the composer's picker, with a caption: a voice note too.
        wav, _ = await make_audio(1.2, "wav")
        (tmp_path / "caption.wav").write_bytes(wav)
        await page.locator("#files").set_input_files(tmp_path / "caption.wav")
        await page.locator("#text").fill("listen")
        await page.get_by_role("button", name="Send").click()
        _, plaintext = await next_message(agent)
        captioned = json.loads(plaintext)
        assert captioned["text"] == "listen"
        assert captioned["attachments"][0]["mime"] == "audio/wav"
        assert abs(captioned["attachments"][0]["duration_ms"] - 1200) <= DURATION_SLACK_MS

        # Recording: the elapsed time is the duration, the type the recorder's.
        await page.locator("#record").click()
        await expect(page.locator("#record")).to_have_text("■ Stop")
        await page.wait_for_timeout(RECORDING_MS)
        await page.locator("#record").click()
        _, plaintext = await next_message(agent)
        [recorded] = json.loads(plaintext)["attachments"]
        assert recorded["mime"] == "audio/webm"
        assert RECORDING_MS <= recorded["duration_ms"] < RECORDING_MS + 2000
        await expect(mine).to_have_count(3)

        # The agent's spoken answer: a player whose source loads from the emulator.
        answer, _ = await make_audio(1.0, "ogg")
        spoken = await agent.upload_file(answer, "answer.ogg", "audio/ogg", duration_ms=1000)
        await agent.reply_files(envelope, "The kitchen light is on.", [spoken])
        player = page.locator(".bubble.in .voice-note audio")
        await expect(player).to_have_count(1)
        await expect(page.locator(".bubble.in .voice-note")).to_contain_text("Voice note · 0:01")
        await page.wait_for_function(
            "node => node.readyState >= 1 && Number.isFinite(node.duration) && node.duration > 0",
            arg=await player.element_handle(),
        )
        duration = await player.evaluate("node => node.duration")
        assert abs(duration - 1.0) < 0.1
        source = await player.get_attribute("src")
        assert source is not None
        assert source.startswith(f"/_emulator/conversations/{installed.conversation_id}/files/")
        served = await page.evaluate(
            "async (url) => { const r = await fetch(url);"
            " return [r.headers.get('content-type'), r.headers.get('x-content-type-options'),"
            " btoa(String.fromCharCode(...new Uint8Array(await r.arrayBuffer())))]; }",
            source,
        )
        assert served == ["audio/ogg", "nosniff", base64.b64encode(answer).decode()]
        await shots.take(page, "answered")
    finally:
        await agent.close()
        await context.close()
    assert problems.seen == []
