"""The spoken answer of a voice assistant (voice/answer.py) and the format sniffer's edges,
with the real TTS manager and a voice engine of the test's own."""

import dataclasses

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.voice import answer as voice_answer
from custom_components.pacerelle.voice.answer import SpokenAnswerError, async_speak
from custom_components.pacerelle.voice.formats import ADTS, MP3, sniff_voice_format
from tests.helpers.voice_assist import SPOKEN_PREFIX, async_voice_assistant


async def test_the_pipelines_voice_says_the_answer(hass: HomeAssistant) -> None:
    assistant = await async_voice_assistant(hass)
    spoken = await async_speak(hass, assistant.pipeline, "The kitchen light is on")
    assert spoken.data == SPOKEN_PREFIX + b"The kitchen light is on"
    assert spoken.mime == "audio/mpeg"
    assert spoken.name == "answer.mp3"
    assert assistant.tts.messages == ["The kitchen light is on"]


async def test_a_pipeline_without_a_voice_is_refused_before_any_engine(
    hass: HomeAssistant,
) -> None:
    assistant = await async_voice_assistant(hass)
    mute = dataclasses.replace(assistant.pipeline, tts_engine=None)
    with pytest.raises(SpokenAnswerError, match="no text-to-speech"):
        await async_speak(hass, mute, "hello")
    assert assistant.tts.messages == []


async def test_a_spoken_answer_over_the_cap_is_refused(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = await async_voice_assistant(hass)
    monkeypatch.setattr(voice_answer, "MAX_SPOKEN_ANSWER_BYTES", len(SPOKEN_PREFIX) + 10)
    assert (await async_speak(hass, assistant.pipeline, "0123456789")).data
    with pytest.raises(SpokenAnswerError, match="over"):
        await async_speak(hass, assistant.pipeline, "0123456789 and one more")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xff\xf1\x50\x80", ADTS),  # ADTS AAC: layer bits 00
        (b"\xff\xfb\x90\x64", MP3),  # MPEG-1 layer III frame
        (b"XXXXXXXXWAVEfmt ", None),  # WAVE where RIFF should be: not a WAV
        (b"\xff", None),
        (b"", None),
    ],
)
def test_bare_frames_and_a_fake_wave_header(data: bytes, expected: object) -> None:
    assert sniff_voice_format(data) is expected
