"""ffmpeg is a manifest dependency: Home Assistant sets it up before the integration, and
voice/audio.py takes its binary from the ffmpeg integration's public get_ffmpeg_manager."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.voice.audio import (
    NO_CONVERTER,
    VoiceAudioError,
    async_voice_to_pcm,
)
from custom_components.pacerelle.voice.formats import VOICE_BYTES_PER_SECOND
from tests.helpers.voice_assist import wav_note
from tests.helpers.voice_audio import official_image_known  # noqa: F401

pytestmark = pytest.mark.usefixtures("official_image_known")


async def test_setting_up_the_integration_sets_up_ffmpeg_and_converts(
    hass: HomeAssistant,
) -> None:
    assert "ffmpeg" not in hass.config.components
    assert await async_setup_component(hass, DOMAIN, {})
    assert "ffmpeg" in hass.config.components
    note, _ = wav_note(0.5, rate=8000)  # not 16 kHz: only ffmpeg converts it
    pcm = await async_voice_to_pcm(hass, note, "audio/wav")
    assert abs(len(pcm) - VOICE_BYTES_PER_SECOND // 2) <= VOICE_BYTES_PER_SECOND // 50


async def test_without_the_ffmpeg_integration_only_16k_wav_converts(
    hass: HomeAssistant,
) -> None:
    """Only where Home Assistant did not set this integration up (its dependency)."""
    note, pcm_bytes = wav_note(0.5)
    assert len(await async_voice_to_pcm(hass, note, "audio/wav")) == pcm_bytes
    slow, _ = wav_note(0.5, rate=8000)
    with pytest.raises(VoiceAudioError) as refused:
        await async_voice_to_pcm(hass, slow, "audio/wav")
    assert refused.value.reason == NO_CONVERTER
    assert "ffmpeg" not in hass.config.components
