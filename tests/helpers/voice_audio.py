"""Real voice notes for the voice_audio tests: made by ffmpeg, checked as PCM.

Notes are made once per test session and arguments (a sine, a few seconds, in every
format a phone sends) and cached in a temporary folder.
"""

import array
import itertools
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.util.system_info import is_official_image

from custom_components.pacerelle.voice.audio import (
    VOICE_ERROR_REASONS,
    VOICE_SAMPLE_RATE,
    VoiceAudioError,
    async_voice_to_pcm,
)

SECONDS = 3
TONE_HZ = 440
# Codec padding and frame granularity: a few hundredths of a second either way.
LENGTH_MARGIN_SAMPLES = VOICE_SAMPLE_RATE // 20
NOTE_TIMEOUT_SECONDS = 30

# name: (mime a phone would send, ffmpeg output arguments)
FORMATS: dict[str, tuple[str, list[str]]] = {
    "ogg_opus": ("audio/ogg", ["-c:a", "libopus", "-f", "ogg"]),
    "webm_opus": ("audio/webm", ["-c:a", "libopus", "-f", "webm"]),
    "m4a_aac": ("audio/mp4", ["-c:a", "aac", "-f", "mp4"]),
    "mp3": ("audio/mpeg", ["-c:a", "libmp3lame", "-f", "mp3"]),
    "flac": ("audio/flac", ["-c:a", "flac", "-f", "flac"]),
    "wav_44k_stereo": ("audio/wav", ["-ar", "44100", "-ac", "2", "-c:a", "pcm_s16le", "-f", "wav"]),
    "wav_16k_mono": ("audio/wav", ["-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav"]),
    # A codec no phone uses: its decoder is not on voice_audio's list.
    "wav_adpcm_yamaha": (
        "audio/wav",
        ["-ar", "16000", "-ac", "1", "-c:a", "adpcm_yamaha", "-f", "wav"],
    ),
    # Cheap to make and decode at any length: for the duration limit through ffmpeg.
    "wav_8k_mono": ("audio/wav", ["-ar", "8000", "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav"]),
}

type MakeNote = Callable[..., bytes]


@pytest.fixture(autouse=True, scope="session")
def official_image_known() -> None:
    """Home Assistant's bootstrap caches this (a stat) before the loop runs; the harness doesn't."""
    is_official_image()


def make_note_file(
    path: Path, output: list[str], *, seconds: float = SECONDS, hz: int = TONE_HZ
) -> Path:
    """A sine note made by ffmpeg (kept if already made)."""
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
            timeout=NOTE_TIMEOUT_SECONDS,
        )
    return path


def note_maker(tmp_path_factory: pytest.TempPathFactory) -> MakeNote:
    """Makes (once per session and arguments) a real note in one of FORMATS: its bytes."""
    directory = tmp_path_factory.getbasetemp() / "voice-notes"
    directory.mkdir(exist_ok=True)

    def make(name: str, *, seconds: float = SECONDS, hz: int = TONE_HZ) -> bytes:
        path = directory / f"{name}-{seconds}-{hz}"
        return make_note_file(path, FORMATS[name][1], seconds=seconds, hz=hz).read_bytes()

    return make


def pcm_samples(pcm: bytes) -> array.array[int]:
    samples = array.array("h")
    samples.frombytes(pcm)
    return samples


def tone_hz(pcm: bytes) -> float:
    """The frequency of a sine, from its zero crossings: wrong if the rate is wrong."""
    samples = pcm_samples(pcm)
    crossings = sum(1 for a, b in itertools.pairwise(samples) if (a < 0) != (b < 0))
    return crossings / 2 / (len(samples) / VOICE_SAMPLE_RATE)


def assert_is_the_tone(pcm: bytes, *, seconds: float = SECONDS, hz: int = TONE_HZ) -> None:
    """16 kHz mono s16le PCM of the note's sine: its length, not silence, its pitch.

    The pitch is measured on the first SECONDS (a long note costs no more to check).
    """
    assert len(pcm) % 2 == 0
    assert abs(len(pcm) // 2 - seconds * VOICE_SAMPLE_RATE) <= LENGTH_MARGIN_SAMPLES
    samples = pcm_samples(pcm)
    assert max(samples) > 1000, "silence"
    assert min(samples) < -1000, "silence"
    assert abs(tone_hz(pcm[: SECONDS * VOICE_SAMPLE_RATE * 2]) - hz) < hz * 0.02


async def refusal(hass: HomeAssistant, data: bytes, mime: str) -> str:
    """The reason async_voice_to_pcm refuses the note (fails the test if it does not)."""
    with pytest.raises(VoiceAudioError) as caught:
        await async_voice_to_pcm(hass, data, mime)
    assert caught.value.reason in VOICE_ERROR_REASONS
    return caught.value.reason
