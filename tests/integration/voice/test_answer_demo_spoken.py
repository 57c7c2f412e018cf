"""The demo's offline text-to-speech (scripts/lib/demo/pacerelle_demo/tts.py) for real:
espeak-ng becomes the preferred voice assistant's voice, a voice note said to the agent is
answered with a voice note (MP3 that ffmpeg decodes to speech) and the text, what it says
is heard back by the demo's own speech-to-text, and its bounds hold (length, time, size,
a message is never an option)."""

import math
import struct
from pathlib import Path

import pytest
from homeassistant.components.assist_pipeline import OPTION_PREFERRED, async_update_pipeline
from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.options import (
    CONF_ASSIST_AGENT,
    CONF_VOICE_PIPELINE,
    CONF_VOICE_SPOKEN_ANSWER,
)
from custom_components.pacerelle.voice.answer import async_speak
from custom_components.pacerelle.voice.audio import async_voice_to_pcm
from tests.helpers.agent import start_agent
from tests.helpers.demo_speech import (
    ENGINE,
    KITCHEN_LIGHT,
    async_demo_voice,
    load_demo_module,
    spoken,
)
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.voice import send_voice_note, wait_received_audio

HEARD_WITHIN = 60.0  # seconds: PocketSphinx, Assist, espeak-ng and ffmpeg on a shared machine
ANSWER = "Turned on the light"


@pytest.fixture
async def demo(hass: HomeAssistant) -> None:
    await async_demo_voice(hass)


def _rms(pcm: bytes) -> float:
    samples = struct.unpack(f"<{len(pcm) // 2}h", pcm[: len(pcm) // 2 * 2])
    return math.sqrt(sum(s * s for s in samples) / max(len(samples), 1))


@pytest.mark.usefixtures("demo")
async def test_the_preferred_voice_assistant_speaks_with_the_demo(hass: HomeAssistant) -> None:
    pipeline = async_get_pipeline(hass)
    assert (pipeline.tts_engine, pipeline.tts_language, pipeline.tts_voice) == (
        ENGINE,
        "en-US",
        None,
    )
    # Both engines were lent to the same pipeline: neither undid the other.
    assert pipeline.stt_engine == ENGINE


async def test_a_voice_assistant_with_a_voice_of_its_own_keeps_it(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "assist_pipeline", {})
    await async_update_pipeline(
        hass, async_get_pipeline(hass), tts_engine="tts.elsewhere", tts_language="en"
    )
    await async_demo_voice(hass)
    pipeline = async_get_pipeline(hass)
    assert (pipeline.tts_engine, pipeline.tts_language) == ("tts.elsewhere", "en")
    assert pipeline.stt_engine == ENGINE


@pytest.mark.usefixtures("demo")
async def test_a_voice_note_is_answered_with_a_voice_note_and_the_text(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    options = {
        CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT,
        CONF_VOICE_PIPELINE: OPTION_PREFERRED,
        CONF_VOICE_SPOKEN_ANSWER: True,
    }
    installed = (await start_agent(hass, emulator, options=options)).installed
    note = await hass.async_add_executor_job(spoken, "turn_on_the_kitchen_light.wav")
    asked = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav")

    [answer] = await wait_received_audio(
        emulator, installed.conversation_id, 1, within=HEARD_WITHIN
    )
    assert hass.states.get(KITCHEN_LIGHT).state == "on"  # type: ignore[union-attr]
    assert answer.text == ANSWER
    assert (answer.mime, answer.name) == ("audio/mpeg", "answer.mp3")
    # What the person's phone plays: the integration's own converter decodes it (ffmpeg).
    pcm = await async_voice_to_pcm(hass, answer.data, answer.mime)
    seconds = len(pcm) / 32000
    assert 0.5 < seconds < 5, seconds  # "Turned on the light" is about a second
    assert _rms(pcm) > 300  # speech, not silence
    [reply] = await emulator.inbox(installed.conversation_id)
    assert reply["reply_to_message_id"] == asked


@pytest.mark.usefixtures("demo")
@pytest.mark.parametrize(
    ("said", "heard"),
    [
        ("turn on the kitchen light", "turn on the kitchen light"),
        # Outside the grammar, PocketSphinx's best path ends half-way ("add"): nothing.
        ("add a bottle of wine", ""),
        ("add some wine", ""),
    ],
)
async def test_what_the_demo_says_its_speech_to_text_hears(
    hass: HomeAssistant, said: str, heard: str
) -> None:
    spoken_answer = await async_speak(hass, async_get_pipeline(hass), said)
    assert spoken_answer.mime == "audio/mpeg"
    pcm = await async_voice_to_pcm(hass, spoken_answer.data, spoken_answer.mime)
    stt = await hass.async_add_executor_job(load_demo_module, "stt")
    grammar = await hass.async_add_executor_job(stt.GRAMMAR.read_text)
    recognizer = await hass.async_add_executor_job(stt.CommandRecognizer, grammar)
    assert await hass.async_add_executor_job(recognizer.recognize, pcm) == heard


def test_the_demo_hears_whole_sentences_of_its_grammar() -> None:
    stt = load_demo_module("stt")
    sentences = stt.sentences(stt.GRAMMAR.read_text())
    assert len(sentences) == 4 + 2 + 10 * 2
    assert {"turn the kitchen light off", "unlock the front door", "add tea"} <= sentences
    assert "add tea to the shopping list" in sentences
    assert not {"add", "turn on the kitchen", "add to the shopping list"} & sentences


async def test_a_message_is_never_an_option_nor_markup(tmp_path: Path) -> None:
    tts = load_demo_module("tts")
    espeak = tts.shutil.which(tts.ESPEAK)
    assert espeak is not None, "scripts/setup installs espeak-ng"
    written = tmp_path / "written.wav"
    wav = await tts.speak(espeak, f"--help <speak>x</speak> -w {written}")
    assert wav.startswith(b"RIFF")
    assert len(wav) > 44 * 1024  # seconds of speech, not a usage text
    assert not written.exists()


async def test_a_message_over_the_length_is_not_spoken(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    tts = load_demo_module("tts")
    provider = tts.DemoTextToSpeech("/nonexistent/espeak-ng")  # refused before it runs
    secret = "x" * (tts.MAX_MESSAGE_CHARS + 1)
    assert await provider.async_get_tts_audio(secret, "en-US", {}) == (None, None)
    assert f"{tts.MAX_MESSAGE_CHARS + 1} characters" in caplog.text
    assert secret not in caplog.text


async def test_a_hung_espeak_is_stopped(
    hass: HomeAssistant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tts = load_demo_module("tts")
    hung = tmp_path / "espeak-ng"
    pid_file = tmp_path / "pid"
    hung.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    hung.chmod(0o755)
    monkeypatch.setattr(tts, "SPEAK_TIMEOUT", 1.0)
    provider = tts.DemoTextToSpeech(str(hung))
    assert await provider.async_get_tts_audio("hello", "en-US", {}) == (None, None)
    pid = int(await hass.async_add_executor_job(pid_file.read_text))
    assert not await hass.async_add_executor_job(Path(f"/proc/{pid}").exists)


async def test_audio_over_the_cap_is_refused(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tts = load_demo_module("tts")
    espeak = tts.shutil.which(tts.ESPEAK)
    monkeypatch.setattr(tts, "MAX_AUDIO_BYTES", 4096)
    provider = tts.DemoTextToSpeech(espeak)
    assert await provider.async_get_tts_audio("The kitchen light is on", "en-US", {}) == (
        None,
        None,
    )
    assert "over 4096 bytes" in caplog.text
    assert "kitchen" not in caplog.text
