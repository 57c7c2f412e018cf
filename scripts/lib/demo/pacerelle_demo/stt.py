"""The demo's speech-to-text: PocketSphinx, offline, limited to the demo's commands.

`pacerelle_demo:` (the demo's package) loads this platform: the engine `pacerelle_demo`.
It hears 16 kHz mono 16-bit PCM (what voice notes are converted to) in US English, and
only the sentences of commands.jsgf: each note is heard as the closest of them, or as
nothing (an error result, which Assist reports as no words heard). PocketSphinx gives its
best path even when none reaches the grammar's end (a partial "add"): only a whole sentence
of the grammar is heard. The model is the one
the pocketsphinx package carries (scripts/setup installs it); nothing is downloaded.

Once Home Assistant has started, a preferred Assist pipeline without speech-to-text gets
this engine (__init__.py), so that the demo's "Preferred voice assistant" transcribes.
Decoding runs in the executor, one note at a time.
"""

import asyncio
import io
import re
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
        self._sentences = sentences(grammar)
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
        heard = " ".join(hypothesis.hypstr.split()) if hypothesis is not None else ""
        return heard if heard in self._sentences else ""


_TOKEN: Final = re.compile(r"<[^>]+>|[()\[\]|]|[^\s()\[\]|<>;]+")
_RULE: Final = re.compile(r"\s*(public\s+)?<([^>]+)>\s*=(.*)", re.DOTALL)


def sentences(grammar: str) -> frozenset[str]:
    """Every sentence of the grammar's public rules, in the part of JSGF that
    commands.jsgf uses: words, `<rule>`s, `( | )` and `[ ]`."""
    rules: dict[str, list[str]] = {}
    public: list[str] = []
    for statement in re.sub(r"//[^\n]*", "", grammar).split(";"):
        if (rule := _RULE.fullmatch(statement)) is not None:
            rules[rule[2]] = _TOKEN.findall(rule[3])
            if rule[1]:
                public.append(rule[2])

    def expand(tokens: list[str], at: int) -> tuple[set[tuple[str, ...]], int]:
        """The alternatives from `at` to the closing bracket (or the end), and where."""
        options: set[tuple[str, ...]] = set()
        while True:
            sequence: set[tuple[str, ...]] = {()}
            while at < len(tokens) and tokens[at] not in ("|", ")", "]"):
                token = tokens[at]
                if token in ("(", "["):
                    inner, at = expand(tokens, at + 1)
                    inner |= {()} if token == "[" else set()
                elif token.startswith("<"):
                    inner = expand(rules[token[1:-1]], 0)[0]
                else:
                    inner = {(token,)}
                at += 1
                sequence = {left + right for left in sequence for right in inner}
            options |= sequence
            if at >= len(tokens) or tokens[at] != "|":
                return options, at
            at += 1

    return frozenset(" ".join(words) for name in public for words in expand(rules[name], 0)[0])


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
