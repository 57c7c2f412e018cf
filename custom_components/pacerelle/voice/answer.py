"""The spoken answer to a voice note: the pipeline's text-to-speech, as an audio file.

Used by the Assist bridge when `voice_spoken_answer` is on and the voice pipeline has a
text-to-speech engine. The answer is synthesised exactly as the pipeline's own TTS stage
does it (Home Assistant's tts API with the pipeline's engine, language and voice), in
Home Assistant's default format (MP3, which every Pacerelle app plays; Home Assistant
converts with its ffmpeg when an engine speaks another format). It is bounded in time
(SPOKEN_ANSWER_TIMEOUT) and size (MAX_SPOKEN_ANSWER_BYTES); the caller sends the text
answer alone when anything fails. Unlike the pipeline's own stage, the answer skips the TTS
file cache: what Home Assistant answered a person stays in memory, never on disk.
"""

import asyncio
from dataclasses import dataclass
from typing import Final

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.components.tts.const import DATA_TTS_MANAGER
from homeassistant.core import HomeAssistant

from ..limits import MAX_SPOKEN_ANSWER_BYTES, SPOKEN_ANSWER_TIMEOUT

SPOKEN_ANSWER_NAME: Final = "answer"


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
    stream = hass.data[DATA_TTS_MANAGER].async_create_result_stream(
        pipeline.tts_engine,
        use_file_cache=False,
        language=pipeline.tts_language,
        options=options,
    )
    stream.async_set_message(text)
    chunks: list[bytes] = []
    size = 0
    async with asyncio.timeout(SPOKEN_ANSWER_TIMEOUT):
        async for chunk in stream.async_stream_result():
            size += len(chunk)
            if size > MAX_SPOKEN_ANSWER_BYTES:
                raise SpokenAnswerError(f"over {MAX_SPOKEN_ANSWER_BYTES} bytes")
            chunks.append(chunk)
    if not size:
        raise SpokenAnswerError("no audio")
    return SpokenAnswer(
        b"".join(chunks), stream.content_type, f"{SPOKEN_ANSWER_NAME}.{stream.extension}"
    )
