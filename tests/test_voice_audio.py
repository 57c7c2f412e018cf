"""Voice notes to 16 kHz PCM (issue 19, the audio part): real notes, real ffmpeg, real attacks.

The notes are made by ffmpeg once per module (a sine, a few seconds, in every format a
phone sends); each test then runs the conversion through Home Assistant's ffmpeg
integration, as the bridge does.
"""

import array
import itertools
import logging
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util.system_info import is_official_image

from custom_components.pacerelle import voice_audio
from custom_components.pacerelle.voice_audio import (
    MAX_VOICE_BYTES,
    MAX_VOICE_SECONDS,
    VOICE_ERROR_REASONS,
    VOICE_SAMPLE_RATE,
    VoiceAudioError,
    async_voice_to_pcm,
)

SECONDS = 3
TONE_HZ = 440
# Codec padding and frame granularity: a few hundredths of a second either way.
LENGTH_MARGIN_SAMPLES = VOICE_SAMPLE_RATE // 20

# name: (mime a phone would send, ffmpeg output arguments)
FORMATS: dict[str, tuple[str, list[str]]] = {
    "ogg_opus": ("audio/ogg", ["-c:a", "libopus", "-f", "ogg"]),
    "webm_opus": ("audio/webm", ["-c:a", "libopus", "-f", "webm"]),
    "m4a_aac": ("audio/mp4", ["-c:a", "aac", "-f", "mp4"]),
    "mp3": ("audio/mpeg", ["-c:a", "libmp3lame", "-f", "mp3"]),
    "flac": ("audio/flac", ["-c:a", "flac", "-f", "flac"]),
    "wav_44k_stereo": ("audio/wav", ["-ar", "44100", "-ac", "2", "-c:a", "pcm_s16le", "-f", "wav"]),
    "wav_16k_mono": ("audio/wav", ["-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav"]),
}

type MakeNote = Callable[..., bytes]


@pytest.fixture(autouse=True, scope="module")
def official_image_known() -> None:
    """Home Assistant's bootstrap caches this (a stat) before the loop runs; the harness doesn't."""
    is_official_image()


@pytest.fixture(autouse=True)
async def ffmpeg_set_up(hass: HomeAssistant) -> None:
    """Home Assistant's ffmpeg integration, as assist_pipeline (through tts) loads it."""
    assert await async_setup_component(hass, "ffmpeg", {})


def _make_note(directory: Path, name: str, output: list[str], *, seconds: float, hz: int) -> bytes:
    path = directory / f"{name}-{seconds}-{hz}"
    if not path.exists():
        subprocess.run(
            [
                "ffmpeg",
                "-nostdin",
                "-hide_banner",
                "-loglevel",
                "error",
                "-f",
                "lavfi",
                "-i",
                f"sine=frequency={hz}:duration={seconds}:sample_rate=48000",
                *output,
                "-y",
                str(path),
            ],
            check=True,
            timeout=30,
        )
    return path.read_bytes()


@pytest.fixture(scope="module")
def make_note(tmp_path_factory: pytest.TempPathFactory) -> MakeNote:
    """Makes (once per module and arguments) a real note in one of FORMATS."""
    directory = tmp_path_factory.mktemp("voice-notes")

    def make(name: str, *, seconds: float = SECONDS, hz: int = TONE_HZ) -> bytes:
        return _make_note(directory, name, FORMATS[name][1], seconds=seconds, hz=hz)

    return make


def _samples(pcm: bytes) -> array.array[int]:
    samples = array.array("h")
    samples.frombytes(pcm)
    return samples


def _tone_hz(pcm: bytes) -> float:
    """The frequency of a sine, from its zero crossings: wrong if the rate is wrong."""
    samples = _samples(pcm)
    crossings = sum(1 for a, b in itertools.pairwise(samples) if (a < 0) != (b < 0))
    return crossings / 2 / (len(samples) / VOICE_SAMPLE_RATE)


def assert_is_the_tone(pcm: bytes, *, seconds: float = SECONDS, hz: int = TONE_HZ) -> None:
    assert len(pcm) % 2 == 0
    assert abs(len(pcm) // 2 - seconds * VOICE_SAMPLE_RATE) <= LENGTH_MARGIN_SAMPLES
    assert max(abs(sample) for sample in _samples(pcm)) > 1000, "silence"
    assert abs(_tone_hz(pcm) - hz) < hz * 0.02


async def _reason(hass: HomeAssistant, data: bytes, mime: str) -> str:
    with pytest.raises(VoiceAudioError) as caught:
        await async_voice_to_pcm(hass, data, mime)
    assert caught.value.reason in VOICE_ERROR_REASONS
    return caught.value.reason


@pytest.mark.parametrize("name", list(FORMATS))
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
    assert await _reason(hass, b"\x00\x01garbage" * 100, "audio/ogg") == "unsupported_format"
    assert await _reason(hass, b"", "audio/ogg") == "unsupported_format"


async def test_garbage_behind_a_magic_number_is_unreadable(hass: HomeAssistant) -> None:
    assert await _reason(hass, b"OggS" + bytes(range(256)) * 40, "audio/ogg") == "unreadable"


async def test_an_oversized_note_is_refused_before_any_work(hass: HomeAssistant) -> None:
    data = b"OggS" + bytes(MAX_VOICE_BYTES)
    assert await _reason(hass, data, "audio/ogg") == "too_large"


async def test_a_note_over_the_limit_is_too_long(hass: HomeAssistant, make_note: MakeNote) -> None:
    long_note = make_note("ogg_opus", seconds=MAX_VOICE_SECONDS + 5)
    assert await _reason(hass, long_note, "audio/ogg") == "too_long"
