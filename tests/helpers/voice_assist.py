"""A voice assistant of the test's own: speech-to-text and text-to-speech entities of a
test integration, an Assist pipeline using them, and 16 kHz WAV notes made in Python.

Home Assistant's own test pattern for STT/TTS platforms (a mocked integration whose
config entry sets up `stt` and `tts` entities): real entities behind the real pipeline
API, only the recognition and the synthesis are scripted.
"""

import asyncio
import io
import math
import struct
import wave
from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from typing import Any, Final

from homeassistant.components import stt, tts
from homeassistant.components.assist_pipeline import Pipeline, async_create_default_pipeline
from homeassistant.config_entries import ConfigEntry, ConfigFlow
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockPlatform,
    mock_config_flow,
    mock_integration,
    mock_platform,
)

VOICE_TEST_DOMAIN: Final = "pacerelle_voice_test"
SAMPLE_RATE: Final = 16000
SPOKEN_PREFIX: Final = b"MP3 of the spoken answer: "


def wav_note(seconds: float, rate: int = SAMPLE_RATE) -> tuple[bytes, int]:
    """A tone as a mono 16-bit WAV, and how many bytes of PCM it holds."""
    frames = int(seconds * rate)
    pcm = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * n / rate))) for n in range(frames)
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return out.getvalue(), len(pcm)


class ScriptedSpeechToText(stt.SpeechToTextEntity):
    """Hears `text` in whatever it is given; records what it was given."""

    _attr_name = "Scripted speech"

    def __init__(self) -> None:
        self.text = "turn on the kitchen light"
        self.calls: list[int] = []  # bytes of PCM per note
        self.language: list[str] = []
        self.hold: asyncio.Event | None = None  # set: the engine hangs until it is set
        self.active = 0
        self.most_active = 0  # the most notes it was hearing at once

    @property
    def supported_languages(self) -> list[str]:
        return ["en", "en-US"]

    @property
    def supported_formats(self) -> list[stt.AudioFormats]:
        return [stt.AudioFormats.WAV]

    @property
    def supported_codecs(self) -> list[stt.AudioCodecs]:
        return [stt.AudioCodecs.PCM]

    @property
    def supported_bit_rates(self) -> list[stt.AudioBitRates]:
        return [stt.AudioBitRates.BITRATE_16]

    @property
    def supported_sample_rates(self) -> list[stt.AudioSampleRates]:
        return [stt.AudioSampleRates.SAMPLERATE_16000]

    @property
    def supported_channels(self) -> list[stt.AudioChannels]:
        return [stt.AudioChannels.CHANNEL_MONO]

    async def async_process_audio_stream(
        self, metadata: stt.SpeechMetadata, stream: AsyncIterable[bytes]
    ) -> stt.SpeechResult:
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            received = 0
            async for chunk in stream:
                received += len(chunk)
            self.calls.append(received)
            self.language.append(metadata.language)
            if self.hold is not None:
                await self.hold.wait()
        finally:
            self.active -= 1
        return stt.SpeechResult(self.text, stt.SpeechResultState.SUCCESS)


class ScriptedTextToSpeech(tts.TextToSpeechEntity):
    """Says what it is given as 'MP3' bytes that carry the text (to check them)."""

    _attr_name = "Scripted voice"

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.broken = False  # set: the engine fails
        self.silent = False  # set: the engine gives no audio (HA then names the message)

    @property
    def supported_languages(self) -> list[str]:
        return ["en", "en-US"]

    @property
    def default_language(self) -> str:
        return "en"

    def get_tts_audio(
        self, message: str, language: str, options: dict[str, Any]
    ) -> tts.TtsAudioType:
        self.messages.append(message)
        if self.broken:
            raise RuntimeError("the voice engine is down")
        if self.silent:
            return None, None
        return "mp3", SPOKEN_PREFIX + message.encode()


@dataclass
class VoiceAssistant:
    """The pipeline and its engines, to script and inspect."""

    pipeline: Pipeline
    stt: ScriptedSpeechToText
    tts: ScriptedTextToSpeech
    entry: ConfigEntry = field(repr=False)


async def async_voice_assistant(hass: HomeAssistant) -> VoiceAssistant:
    """Set up Assist's pipeline integration and a pipeline with the scripted engines."""
    speech, voice = ScriptedSpeechToText(), ScriptedTextToSpeech()

    async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        await hass.config_entries.async_forward_entry_setups(entry, [Platform.STT, Platform.TTS])
        return True

    async def unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        return await hass.config_entries.async_unload_platforms(entry, [Platform.STT, Platform.TTS])

    async def stt_entities(
        hass: HomeAssistant, entry: ConfigEntry, add: AddConfigEntryEntitiesCallback
    ) -> None:
        add([speech])

    async def tts_entities(
        hass: HomeAssistant, entry: ConfigEntry, add: AddConfigEntryEntitiesCallback
    ) -> None:
        add([voice])

    # A custom integration, like ours: 2026.10 wants a bool from async_setup_entry, 2026.11
    # refuses one from a built-in integration (None there) and still takes it from a custom one.
    mock_integration(
        hass,
        MockModule(
            VOICE_TEST_DOMAIN, async_setup_entry=setup_entry, async_unload_entry=unload_entry
        ),
        built_in=False,
    )
    mock_platform(hass, f"{VOICE_TEST_DOMAIN}.config_flow")
    mock_platform(hass, f"{VOICE_TEST_DOMAIN}.stt", MockPlatform(async_setup_entry=stt_entities))
    mock_platform(hass, f"{VOICE_TEST_DOMAIN}.tts", MockPlatform(async_setup_entry=tts_entities))
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "assist_pipeline", {})
    entry = MockConfigEntry(domain=VOICE_TEST_DOMAIN)
    entry.add_to_hass(hass)
    with mock_config_flow(VOICE_TEST_DOMAIN, ConfigFlow):
        assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert speech.entity_id is not None
    assert voice.entity_id is not None
    pipeline = await async_create_default_pipeline(
        hass, stt_engine_id=speech.entity_id, tts_engine_id=voice.entity_id, pipeline_name="Voice"
    )
    assert pipeline is not None
    return VoiceAssistant(pipeline, speech, voice, entry)
