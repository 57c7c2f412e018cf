"""The demo's speech-to-text: PocketSphinx, offline, limited to the demo's commands.

`pacerelle_demo:` (the demo's package) loads this platform: the engine `pacerelle_demo`.
It hears 16 kHz mono 16-bit PCM (what voice notes are converted to) in US English, and
only the sentences of commands.jsgf: each note is heard as the closest of them, or as
nothing (an error result, which Assist reports as no words heard). The model is the one
the pocketsphinx package carries (scripts/setup installs it); nothing is downloaded.

Once Home Assistant has started, a preferred Assist pipeline without speech-to-text gets
this engine (__init__.py), so that the demo's "Preferred voice assistant" transcribes.
Decoding runs in the executor, one note at a time.
"""

import asyncio
import io
import threading
import wave
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any, Final

from homeassistant.components.stt import (
    AudioBitRates,
    AudioChannels,
    AudioCodecs,
    AudioFormats,
    AudioSampleRates,
    Provider,
    SpeechMetadata,
    SpeechResult,
    SpeechResultState,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.typing import ConfigType, DiscoveryInfoType

from . import LANGUAGE, async_lend_when_started

SAMPLE_RATE: Final = 16000
GRAMMAR: Final = Path(__file__).with_name("commands.jsgf")
SEARCH: Final = "commands"


async def async_get_engine(
    hass: HomeAssistant, config: ConfigType, discovery_info: DiscoveryInfoType | None = None
) -> Provider:
    """The engine, its decoder loaded once in the executor (about half a second)."""
    grammar = await hass.async_add_executor_job(GRAMMAR.read_text)
    recognizer = await hass.async_add_executor_job(CommandRecognizer, grammar)
    async_lend_when_started(hass, "stt")
    return DemoSpeechToText(recognizer)


class CommandRecognizer:
    """A PocketSphinx decoder searching the grammar only; thread-safe by a lock."""

    def __init__(self, grammar: str) -> None:
        from pocketsphinx import Decoder  # noqa: PLC0415 - demo only, loaded in the executor

        self._decoder: Any = Decoder(samprate=SAMPLE_RATE, lm=None, loglevel="ERROR")
        self._decoder.add_jsgf_string(SEARCH, grammar)
        self._decoder.activate_search(SEARCH)
        self._lock = threading.Lock()

    def recognize(self, audio: bytes) -> str:
        """The sentence heard in `audio` (16 kHz mono s16le, bare as Assist streams it or
        in a WAV file as the stt HTTP API may post it), or "" for none."""
        pcm = _pcm_of(audio)
        with self._lock:
            self._decoder.start_utt()
            self._decoder.process_raw(pcm, full_utt=True)
            self._decoder.end_utt()
            hypothesis = self._decoder.hyp()
        return hypothesis.hypstr.strip() if hypothesis is not None else ""


def _pcm_of(audio: bytes) -> bytes:
    if not audio.startswith(b"RIFF"):
        return audio
    try:
        with wave.open(io.BytesIO(audio)) as wav:
            return wav.readframes(wav.getnframes())
    except (wave.Error, EOFError):
        return b""


class DemoSpeechToText(Provider):
    """Home Assistant's legacy speech-to-text provider over the recognizer."""

    def __init__(self, recognizer: CommandRecognizer) -> None:
        self._recognizer = recognizer
        self._turn = asyncio.Lock()

    @property
    def supported_languages(self) -> list[str]:
        return [LANGUAGE]

    @property
    def supported_formats(self) -> list[AudioFormats]:
        return [AudioFormats.WAV]

    @property
    def supported_codecs(self) -> list[AudioCodecs]:
        return [AudioCodecs.PCM]

    @property
    def supported_bit_rates(self) -> list[AudioBitRates]:
        return [AudioBitRates.BITRATE_16]

    @property
    def supported_sample_rates(self) -> list[AudioSampleRates]:
        return [AudioSampleRates.SAMPLERATE_16000]

    @property
    def supported_channels(self) -> list[AudioChannels]:
        return [AudioChannels.CHANNEL_MONO]

    async def async_process_audio_stream(
        self, metadata: SpeechMetadata, stream: AsyncIterable[bytes]
    ) -> SpeechResult:
        pcm = bytearray()
        async for chunk in stream:
            pcm += chunk
        assert self.hass is not None
        async with self._turn:
            text = await self.hass.async_add_executor_job(self._recognizer.recognize, bytes(pcm))
        if not text:
            return SpeechResult(None, SpeechResultState.ERROR)
        return SpeechResult(text, SpeechResultState.SUCCESS)
