"""Voice notes to 16 kHz PCM (issue 19, the audio part): real notes, real ffmpeg.

Every phone format, the limits, broken notes. The attacks (hostile files, a hanging or
flooding decoder, no decoder) are in tests/integration/voice/test_audio_attacks.py.
"""

import logging
import random

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.limits import (
    MAX_VOICE_BYTES,
    MAX_VOICE_PCM_BYTES,
    MAX_VOICE_SECONDS,
)
from custom_components.pacerelle.voice import audio as voice_audio
from custom_components.pacerelle.voice.audio import async_voice_to_pcm
from tests.helpers.voice_audio import (
    FORMATS,
    SECONDS,
    MakeNote,
    assert_is_the_tone,
    note_maker,
    official_image_known,  # noqa: F401
    refusal,
)


@pytest.fixture(scope="session")
def make_note(tmp_path_factory: pytest.TempPathFactory) -> MakeNote:
    return note_maker(tmp_path_factory)


@pytest.fixture(autouse=True)
async def ffmpeg_set_up(hass: HomeAssistant) -> None:
    """Home Assistant's ffmpeg integration, as assist_pipeline (through tts) loads it."""
    assert await async_setup_component(hass, "ffmpeg", {})


@pytest.mark.parametrize(
    "name", [name for name in FORMATS if name not in {"wav_8k_mono", "wav_adpcm_yamaha"}]
)
async def test_every_phone_format_becomes_16k_mono_pcm(
    hass: HomeAssistant, make_note: MakeNote, name: str
) -> None:
    pcm = await async_voice_to_pcm(hass, make_note(name), FORMATS[name][0])
    assert_is_the_tone(pcm)


async def test_the_bytes_decide_not_the_mime(
    hass: HomeAssistant, make_note: MakeNote, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=voice_audio.__name__)
    pcm = await async_voice_to_pcm(hass, make_note("ogg_opus"), "audio/mpeg")
    assert_is_the_tone(pcm)
    assert "sent as 'audio/mpeg' is ogg" in caplog.text


async def test_garbage_is_an_unsupported_format(hass: HomeAssistant) -> None:
    assert await refusal(hass, b"\x00\x01garbage" * 100, "audio/ogg") == "unsupported_format"
    assert await refusal(hass, b"", "audio/ogg") == "unsupported_format"


async def test_garbage_behind_a_magic_number_is_unreadable(hass: HomeAssistant) -> None:
    assert await refusal(hass, b"OggS" + bytes(range(256)) * 40, "audio/ogg") == "unreadable"


async def test_an_oversized_note_is_too_large(hass: HomeAssistant) -> None:
    assert await refusal(hass, b"OggS" + bytes(MAX_VOICE_BYTES), "audio/ogg") == "too_large"


@pytest.mark.parametrize("name", ["wav_8k_mono", "wav_16k_mono"])
async def test_a_note_over_the_limit_is_too_long(
    hass: HomeAssistant, make_note: MakeNote, name: str
) -> None:
    """Through ffmpeg (8 kHz) and through Python (16 kHz): 5 s over the limit."""
    long_note = make_note(name, seconds=MAX_VOICE_SECONDS + 5)
    assert await refusal(hass, long_note, "audio/wav") == "too_long"


async def test_a_note_just_under_the_limit_passes(hass: HomeAssistant, make_note: MakeNote) -> None:
    seconds = MAX_VOICE_SECONDS - 1
    pcm = await async_voice_to_pcm(hass, make_note("wav_8k_mono", seconds=seconds), "audio/wav")
    assert_is_the_tone(pcm, seconds=seconds)


@pytest.mark.parametrize("name", ["ogg_opus", "mp3", "wav_16k_mono"])
async def test_a_note_cut_short_gives_what_decodes(
    hass: HomeAssistant, make_note: MakeNote, name: str
) -> None:
    """Streamed formats decode up to the cut (an upload that stopped half way)."""
    note = make_note(name)
    pcm = await async_voice_to_pcm(hass, note[: len(note) // 2], FORMATS[name][0])
    assert_is_the_tone(pcm, seconds=len(pcm) / 2 / voice_audio.VOICE_SAMPLE_RATE)
    assert SECONDS * 0.3 < len(pcm) / 2 / voice_audio.VOICE_SAMPLE_RATE < SECONDS * 0.7


async def test_an_mp4_cut_before_its_index_is_unreadable(
    hass: HomeAssistant, make_note: MakeNote
) -> None:
    """ffmpeg writes the MP4 index (moov) last: without it, nothing decodes."""
    note = make_note("m4a_aac")
    assert await refusal(hass, note[: len(note) // 2], "audio/mp4") == "unreadable"


@pytest.mark.parametrize("name", ["ogg_opus", "webm_opus", "m4a_aac", "mp3", "flac"])
async def test_a_corrupted_note_gives_bounded_audio_or_unreadable(
    hass: HomeAssistant, make_note: MakeNote, name: str
) -> None:
    """Bytes scribbled over past the header: never a hang, a crash or unbounded output."""
    note = bytearray(make_note(name))
    scribbles = random.Random(name)
    for _ in range(64):
        note[scribbles.randrange(64, len(note))] = scribbles.randrange(256)
    pcm, reason = b"", ""
    try:
        pcm = await async_voice_to_pcm(hass, bytes(note), FORMATS[name][0])
    except voice_audio.VoiceAudioError as err:
        reason = err.reason
    assert reason == "unreadable" or 0 < len(pcm) <= MAX_VOICE_PCM_BYTES
