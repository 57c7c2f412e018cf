"""Voice notes: transcribed by an Assist pipeline before their message's event fires.

A voice note is the first attachment of a message whose mime is `audio/*`. It is
transcribed, and the `pacerelle_message` event carries the text as `transcript`, when:

- the options choose a voice pipeline (`voice_pipeline`), and
- the request was judged trusted (the one judgement the client made when it opened it,
  client/trust/door.py: `Request.judged`), and
- the Assist bridge is on and would answer the note (assist.py: the owner's direct
  messages, and any member's group messages with `assist_in_groups`), or
  `voice_transcripts` is on (every trusted device, for automations).

Otherwise, and when anything fails, `transcript` is null. Never for an untrusted or blocked
device: a stranger's audio reaches neither a decoder nor a speech-to-text provider.

How: the note's declared `duration_ms` and `size` are checked against limits.py's
limits before anything is downloaded; the note is downloaded and decrypted in memory
(events.py bounds the download in time and number), made 16 kHz mono PCM (voice/audio.py:
ffmpeg in a subprocess when needed, never on the event loop) and streamed to the pipeline
with Home Assistant's pipeline API, speech-to-text stage only, without voice activity
detection (a note is a whole recording, not a live microphone). The pipeline run is
bounded by VOICE_PIPELINE_TIMEOUT. One note at a time per person (a lock per sender): a
burst of notes from one person cannot occupy every speech-to-text slot. Nothing is written
to disk unless the media folder option saves the file anyway (attachments.py).

What went wrong (VoiceOutcome.problem) is kept in memory for the Assist bridge, which
tells the person why (never silence); at most MAX_VOICE_OUTCOMES are kept.
"""

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.components import stt

# The ignore: PipelineStage and async_get_pipeline are the package's own names (core's
# assist_satellite imports them from it); 2026.10 leaves them out of its __all__, so mypy
# --strict refuses them there, 2026.11 lists them. A misspelt name still fails at import.
from homeassistant.components.assist_pipeline import (  # type: ignore[attr-defined, unused-ignore]
    OPTION_PREFERRED,
    AudioSettings,
    Pipeline,
    PipelineEvent,
    PipelineEventType,
    PipelineNotFound,
    PipelineStage,
    async_get_pipeline,
    async_pipeline_from_audio_stream,
)
from homeassistant.core import Context, HomeAssistant, callback

from ..client import DeviceTrust, PacerelleError, Request
from ..files.attachments import DownloadTimeoutError
from ..limits import (
    MAX_VOICE_BYTES,
    MAX_VOICE_OUTCOMES,
    MAX_VOICE_SECONDS,
    VOICE_PIPELINE_TIMEOUT,
)
from .audio import (
    NO_CONVERTER,
    TIMEOUT,
    TOO_LARGE,
    TOO_LONG,
    UNREADABLE,
    UNSUPPORTED_FORMAT,
    VoiceAudioError,
    async_voice_to_pcm,
)

_LOGGER = logging.getLogger(__name__)

# Bytes of PCM handed to the pipeline at a time (0.128 s at 16 kHz).
PCM_CHUNK_BYTES: Final = 4096

# Problems besides voice/audio.py's reasons.
DOWNLOAD_FAILED: Final = "download_failed"
NO_PIPELINE: Final = "no_pipeline"
# The pipeline has no speech-to-text engine, or its engine is not loaded.
NO_STT: Final = "no_speech_to_text"
STT_FAILED: Final = "stt_failed"
NO_TEXT: Final = "no_text"
PIPELINE_TIMEOUT: Final = "pipeline_timeout"
# The pipeline's error code when the engine heard nothing (assist_pipeline's own).
STT_NO_TEXT_CODE: Final = "stt-no-text-recognized"
# The pipeline's error code when its speech-to-text engine is not loaded.
STT_MISSING_CODE: Final = "stt-provider-missing"

# The answer (strings.json "exceptions") the Assist bridge gives for each problem; anything
# else is `voice_failed` (a problem Home Assistant logged: the person cannot fix it).
VOICE_PROBLEM_KEYS: Final[Mapping[str, str]] = {
    UNSUPPORTED_FORMAT: "voice_unsupported_format",
    TOO_LONG: "voice_too_long",
    TOO_LARGE: "voice_too_large",
    UNREADABLE: "voice_unreadable",
    NO_TEXT: "voice_no_text",
    TIMEOUT: "voice_timeout",
    PIPELINE_TIMEOUT: "voice_timeout",
    NO_CONVERTER: "voice_failed",
    DOWNLOAD_FAILED: "voice_failed",
    NO_PIPELINE: "voice_failed",
    NO_STT: "voice_no_stt",
    STT_FAILED: "voice_failed",
}

type Download = Callable[[Mapping[str, Any]], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class VoiceOutcome:
    """A transcribed note's text, or why there is none (`problem`)."""

    transcript: str | None = None
    problem: str | None = None


def run_pipeline_id(option: str) -> str | None:
    """The pipeline id to run for the option's value: "preferred" is Home Assistant's
    preferred voice assistant at the time of the note (None to the pipeline API)."""
    return None if option == OPTION_PREFERRED else option


def find_pipeline(hass: HomeAssistant, option: str) -> Pipeline | None:
    """The option's pipeline; None if it was deleted or Assist is not set up."""
    try:
        return async_get_pipeline(hass, run_pipeline_id(option))
    except PipelineNotFound, KeyError:  # KeyError: the assist_pipeline integration is off
        _LOGGER.warning("Voice pipeline %s does not exist", option)
        return None


def voice_note(attachments: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """A message's voice note: its first `audio/*` attachment, if any."""
    for attachment in attachments:
        if str(attachment.get("mime", "")).strip().lower().startswith("audio/"):
            return attachment
    return None


def check_declared_bounds(attachment: Mapping[str, Any]) -> None:
    """VoiceAudioError when the note says it is over the limits: refused undownloaded."""
    duration = attachment.get("duration_ms")
    if type(duration) is int and duration > MAX_VOICE_SECONDS * 1000:
        raise VoiceAudioError(TOO_LONG, f"declared {duration} ms")
    size = attachment.get("size")
    if type(size) is int and size > MAX_VOICE_BYTES:
        raise VoiceAudioError(TOO_LARGE, f"declared {size} bytes")


@dataclass(frozen=True, slots=True)
class VoicePolicy:
    """Whose voice notes are transcribed, by which pipeline (see the module's docstring)."""

    pipeline_id: str | None
    owner_id: str
    bridge_on: bool
    every_trusted_device: bool
    in_groups: bool = False

    def bridged(self, request: Request) -> bool:
        """Whether the Assist bridge answers this request (assist.py's rule)."""
        if not self.bridge_on:
            return False
        return self.in_groups if request.is_group else request.sender_id == self.owner_id

    def wants(self, request: Request, trust: DeviceTrust | None) -> bool:
        if self.pipeline_id is None or trust is None or not trust.trusted:
            return False
        return self.every_trusted_device or self.bridged(request)


class VoiceNotes:
    """Transcribes one agent's voice notes; the outcomes wait here for events and bridge."""

    def __init__(self, hass: HomeAssistant, policy: VoicePolicy) -> None:
        self._hass = hass
        self._policy = policy
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}
        self._outcomes: OrderedDict[str, VoiceOutcome] = OrderedDict()

    @property
    def policy(self) -> VoicePolicy:
        return self._policy

    def wanted(self, request: Request) -> Mapping[str, Any] | None:
        """The voice note to transcribe, or None (no note, no pipeline, not allowed)."""
        note = voice_note(request.attachments)
        if note is None:
            return None
        if not self._policy.wants(request, request.judged):
            _LOGGER.debug("Voice note of %s not transcribed (options, trust)", request.message_id)
            return None
        return note

    async def async_transcribe(
        self, request: Request, note: Mapping[str, Any], download: Download
    ) -> VoiceOutcome:
        """Transcribe the note (one at a time per sender) and keep the outcome."""
        sender = request.sender_id
        lock = self._locks.setdefault(sender, asyncio.Lock())
        # Kept while anyone holds or awaits it (a released lock looks free to a newcomer
        # before its next waiter has woken up).
        self._users[sender] = self._users.get(sender, 0) + 1
        try:
            async with lock:
                outcome = await self._outcome(request, note, download)
        except Exception:
            # Whatever an engine or a converter raises: the message's files are still
            # saved and its event still fires, with the problem told (never silence).
            _LOGGER.exception("Voice note of %s could not be transcribed", request.message_id)
            outcome = VoiceOutcome(problem=STT_FAILED)
        finally:
            self._users[sender] -= 1
            if not self._users[sender]:
                del self._users[sender], self._locks[sender]
        self._keep(request.message_id, outcome)
        return outcome

    async def _outcome(
        self, request: Request, note: Mapping[str, Any], download: Download
    ) -> VoiceOutcome:
        message_id = request.message_id
        try:
            check_declared_bounds(note)
            data = await download(note)
            pcm = await async_voice_to_pcm(self._hass, data, str(note.get("mime", "")))
        except VoiceAudioError as err:
            _LOGGER.info("Voice note of %s not transcribed: %s", message_id, err)
            return VoiceOutcome(problem=err.reason)
        except (PacerelleError, DownloadTimeoutError) as err:
            _LOGGER.warning("Voice note of %s could not be downloaded: %s", message_id, err)
            return VoiceOutcome(problem=DOWNLOAD_FAILED)
        del data  # the note's bytes are not kept longer than needed
        return await self._speech_to_text(message_id, pcm)

    def _listening_pipeline(self, message_id: str) -> Pipeline | VoiceOutcome:
        """The pipeline to run, or why none can listen (named in the log)."""
        assert self._policy.pipeline_id is not None  # wanted() checked it
        pipeline = find_pipeline(self._hass, self._policy.pipeline_id)
        if pipeline is None:
            return VoiceOutcome(problem=NO_PIPELINE)
        if pipeline.stt_engine is None:
            _LOGGER.warning(
                "Voice note of %s not transcribed: voice assistant %r (%s) has no "
                "speech-to-text engine (Settings → Voice assistants)",
                message_id,
                pipeline.name,
                self._policy.pipeline_id,
            )
            return VoiceOutcome(problem=NO_STT)
        return pipeline

    async def _speech_to_text(self, message_id: str, pcm: bytes) -> VoiceOutcome:
        pipeline = self._listening_pipeline(message_id)
        if isinstance(pipeline, VoiceOutcome):
            return pipeline
        texts: list[str] = []
        errors: list[tuple[str, str]] = []

        @callback
        def on_event(event: PipelineEvent) -> None:
            data = event.data or {}
            if event.type is PipelineEventType.STT_END:
                texts.append(str(data.get("stt_output", {}).get("text") or ""))
            elif event.type is PipelineEventType.ERROR:
                errors.append((str(data.get("code")), str(data.get("message") or "")))

        try:
            async with asyncio.timeout(VOICE_PIPELINE_TIMEOUT):
                await async_pipeline_from_audio_stream(
                    self._hass,
                    context=Context(),
                    event_callback=on_event,
                    stt_metadata=_pcm_metadata(),
                    stt_stream=_chunks(pcm),
                    pipeline_id=pipeline.id,
                    start_stage=PipelineStage.STT,
                    end_stage=PipelineStage.STT,
                    audio_settings=AudioSettings(is_vad_enabled=False),
                )
        except TimeoutError:
            _LOGGER.warning(
                "Voice note of %s: pipeline %s gave no text within %.0f s",
                message_id,
                self._policy.pipeline_id,
                VOICE_PIPELINE_TIMEOUT,
            )
            return VoiceOutcome(problem=PIPELINE_TIMEOUT)
        except (PipelineNotFound, KeyError):
            # KeyError: the assist_pipeline integration is not loaded at all.
            _LOGGER.warning("Voice pipeline %s does not exist", self._policy.pipeline_id)
            return VoiceOutcome(problem=NO_PIPELINE)
        if errors:
            return _failed(message_id, pipeline, *errors[0])
        text = texts[0].strip() if texts else ""
        return VoiceOutcome(transcript=text) if text else VoiceOutcome(problem=NO_TEXT)

    def _keep(self, message_id: str, outcome: VoiceOutcome) -> None:
        self._outcomes[message_id] = outcome
        while len(self._outcomes) > MAX_VOICE_OUTCOMES:
            self._outcomes.popitem(last=False)

    def delivered(self, request: Request, trust: DeviceTrust | None) -> str | None:
        """The transcript for the request's event (`trust`: the request's judgement).

        An untrusted request gets none (and its outcome is forgotten); an outcome the
        bridge will not take (it does not answer the request) is forgotten now."""
        outcome = self._outcomes.get(request.message_id)
        if outcome is None:
            return None
        if trust is None or not trust.trusted:
            del self._outcomes[request.message_id]
            return None
        if not self._policy.bridged(request):
            del self._outcomes[request.message_id]
        return outcome.transcript

    def take(self, message_id: str) -> VoiceOutcome | None:
        """The note's outcome, forgotten (the bridge has handled it)."""
        return self._outcomes.pop(message_id, None)


def _failed(message_id: str, pipeline: Pipeline, code: str, why: str) -> VoiceOutcome:
    """The outcome of a pipeline error event, logged with the voice assistant's name."""
    _LOGGER.warning(
        "Voice note of %s: speech-to-text of voice assistant %r failed (%s: %s)",
        message_id,
        pipeline.name,
        code,
        why,
    )
    if code == STT_MISSING_CODE:
        return VoiceOutcome(problem=NO_STT)
    return VoiceOutcome(problem=NO_TEXT if code == STT_NO_TEXT_CODE else STT_FAILED)


def _pcm_metadata() -> stt.SpeechMetadata:
    """What voice/audio.py makes: 16 kHz mono 16-bit PCM (the language is the pipeline's)."""
    return stt.SpeechMetadata(
        language="",
        format=stt.AudioFormats.WAV,
        codec=stt.AudioCodecs.PCM,
        bit_rate=stt.AudioBitRates.BITRATE_16,
        sample_rate=stt.AudioSampleRates.SAMPLERATE_16000,
        channel=stt.AudioChannels.CHANNEL_MONO,
    )


async def _chunks(pcm: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(pcm), PCM_CHUNK_BYTES):
        yield pcm[start : start + PCM_CHUNK_BYTES]
