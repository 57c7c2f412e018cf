"""The demo's text-to-speech: eSpeak NG, offline (Debian's espeak-ng, in the root file system).

`pacerelle_demo:` (the demo's package) loads this platform: the engine `pacerelle_demo`.
It says a message in US English as a WAV (22 kHz mono); Home Assistant converts it to the
format asked for (MP3 for the Assist bridge's spoken answer) with its ffmpeg, as for any
engine. Once Home Assistant has started, a preferred Assist pipeline without
text-to-speech gets this engine (__init__.py), so the demo answers voice notes in voice.

espeak-ng runs as a subprocess, never on the event loop nor in an executor thread, one
message at a time. The text goes on its stdin (never as an argument, so a message cannot
be read as an option) as plain text (no SSML). A message over MAX_MESSAGE_CHARS is refused
before anything runs; espeak-ng is killed past SPEAK_TIMEOUT, and its WAV may hold at most
MAX_AUDIO_BYTES. Every refusal or failure is "no audio" to Home Assistant (the bridge then
answers in text only) and a warning here that never quotes the message.
"""

import asyncio
import logging
import shutil
from typing import Any, Final

from homeassistant.components.tts import Provider, TtsAudioType
from homeassistant.core import HomeAssistant
from homeassistant.helpers.typing import ConfigType, DiscoveryInfoType

from . import LANGUAGE, async_lend_when_started

_LOGGER = logging.getLogger(__name__)

ESPEAK: Final = "espeak-ng"
VOICE: Final = "en-us"
# A few sentences (about a minute of speech): an answer, not a page of an LLM's.
MAX_MESSAGE_CHARS: Final = 1000
# espeak-ng says a sentence in a few hundredths of a second.
SPEAK_TIMEOUT: Final = 20.0
# Over a minute of 22 kHz 16-bit mono: more than MAX_MESSAGE_CHARS of speech.
MAX_AUDIO_BYTES: Final = 8 * 1024 * 1024
READ_CHUNK: Final = 64 * 1024


class SpeakError(Exception):
    """espeak-ng gave no usable WAV (a message never in it)."""


async def async_get_engine(
    hass: HomeAssistant, config: ConfigType, discovery_info: DiscoveryInfoType | None = None
) -> Provider | None:
    """The engine, or None (logged) when espeak-ng is not installed."""
    espeak = await hass.async_add_executor_job(shutil.which, ESPEAK)
    if espeak is None:
        _LOGGER.warning(
            "No %s on this system: the demo gives no spoken answers (scripts/setup installs "
            "Debian's espeak-ng package)",
            ESPEAK,
        )
        return None
    async_lend_when_started(hass, "tts")
    return DemoTextToSpeech(espeak)


class DemoTextToSpeech(Provider):
    """Home Assistant's legacy text-to-speech provider over espeak-ng."""

    def __init__(self, espeak: str) -> None:
        self.name = "Pacerelle demo (eSpeak NG)"
        self._espeak = espeak
        self._turn = asyncio.Lock()

    @property
    def default_language(self) -> str:
        return LANGUAGE

    @property
    def supported_languages(self) -> list[str]:
        return [LANGUAGE]

    async def async_get_tts_audio(
        self, message: str, language: str, options: dict[str, Any]
    ) -> TtsAudioType:
        if len(message) > MAX_MESSAGE_CHARS:
            _LOGGER.warning("Not spoken: %d characters, over %d", len(message), MAX_MESSAGE_CHARS)
            return None, None
        try:
            async with self._turn:
                wav = await speak(self._espeak, message)
        except TimeoutError:
            _LOGGER.warning("Not spoken: %s gave no audio within %.0f s", ESPEAK, SPEAK_TIMEOUT)
            return None, None
        except (OSError, SpeakError) as err:
            _LOGGER.warning("Not spoken: %s", err)
            return None, None
        return "wav", wav


async def speak(espeak: str, message: str) -> bytes:
    """espeak-ng's WAV of `message` (SpeakError, TimeoutError, OSError)."""
    process = await asyncio.create_subprocess_exec(
        espeak,
        "-v",
        VOICE,
        "-b",
        "1",  # the input is UTF-8
        "--stdout",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        # A pipe drained and dropped, not /dev/null: opening that would block the loop.
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    drained = asyncio.create_task(_drain(process.stderr))
    try:
        async with asyncio.timeout(SPEAK_TIMEOUT):
            # At most MAX_MESSAGE_CHARS: within the pipe's buffer, espeak-ng need not read yet.
            process.stdin.write(message.encode())
            await process.stdin.drain()
            process.stdin.close()
            wav = bytearray()
            while chunk := await process.stdout.read(READ_CHUNK):
                wav += chunk
                if len(wav) > MAX_AUDIO_BYTES:
                    raise SpeakError(f"{ESPEAK} said over {MAX_AUDIO_BYTES} bytes")
            await process.wait()
    finally:
        drained.cancel()
        if process.returncode is None:
            process.kill()
        # Shielded: a caller cancelled twice leaves no zombie behind.
        await asyncio.shield(process.wait())
    if process.returncode != 0:
        raise SpeakError(f"{ESPEAK} exited with {process.returncode}")
    if not wav.startswith(b"RIFF"):
        raise SpeakError(f"{ESPEAK} gave no WAV")
    return bytes(wav)


async def _drain(stream: asyncio.StreamReader | None) -> None:
    """Read and drop: a chatty espeak-ng never blocks on a full pipe."""
    while stream is not None and await stream.read(READ_CHUNK):
        pass
