"""The spoken answer to a voice note: the pipeline's text-to-speech, as an audio file.

Used by the Assist bridge when `voice_spoken_answer` is on and the voice pipeline has a
text-to-speech engine. The answer is synthesised exactly as the pipeline's own TTS stage
does it (Home Assistant's tts API with the pipeline's engine, language and voice), in
Home Assistant's default format (MP3, which every Pacerelle app plays; Home Assistant
converts with its ffmpeg when an engine speaks another format). It is bounded in time
(SPOKEN_ANSWER_TIMEOUT) and size (MAX_SPOKEN_ANSWER_BYTES); the caller sends the text
answer alone when anything fails. Unlike the pipeline's own stage, the answer skips the TTS
file cache: what Home Assistant answered a person stays in memory, never on disk.

Only the tts integration's public functions are used: a media source id with `cache=False`
(generate_media_source_id) and its audio (async_get_media_source_audio). That function
returns the whole audio at once, so the size is checked on the result; the time bound
still holds while the engine speaks.
"""

import asyncio
import mimetypes
from dataclasses import dataclass
from typing import Final

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import HomeAssistant

from ..limits import MAX_SPOKEN_ANSWER_BYTES, SPOKEN_ANSWER_TIMEOUT

SPOKEN_ANSWER_NAME: Final = "answer"
# What Home Assistant's tts calls an extension it cannot name (its default format is MP3).
DEFAULT_SPOKEN_MIME: Final = "audio/mpeg"


class SpokenAnswerError(Exception):
    """The answer could not be spoken (no engine, too large, engine failure)."""


@dataclass(frozen=True, slots=True)
class SpokenAnswer:
    data: bytes
    mime: str
    name: str


async def async_speak(hass: HomeAssistant, pipeline: Pipeline, text: str) -> SpokenAnswer:
    """The pipeline's voice saying `text` (SpokenAnswerError, TimeoutError)."""
    if not pipeline.tts_engine:
        raise SpokenAnswerError(f"pipeline {pipeline.id} has no text-to-speech")
    options: dict[str, str] = {}
    if pipeline.tts_voice:
        options[tts.ATTR_VOICE] = pipeline.tts_voice
    media_id = tts.generate_media_source_id(
        hass,
        text,
        engine=pipeline.tts_engine,
        language=pipeline.tts_language,
        options=options,
        cache=False,
    )
    async with asyncio.timeout(SPOKEN_ANSWER_TIMEOUT):
        extension, data = await tts.async_get_media_source_audio(hass, media_id)
    if len(data) > MAX_SPOKEN_ANSWER_BYTES:
        raise SpokenAnswerError(f"over {MAX_SPOKEN_ANSWER_BYTES} bytes")
    if not data:
        raise SpokenAnswerError("no audio")
    name = f"{SPOKEN_ANSWER_NAME}.{extension}"
    return SpokenAnswer(data, mimetypes.guess_type(name)[0] or DEFAULT_SPOKEN_MIME, name)
