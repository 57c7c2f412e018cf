"""The Assist bridge: the owner's messages answered by a Home Assistant conversation agent.

Off unless the options name a conversation agent (README "Talk to your home by voice",
"Who can talk to your home"). Only a trusted device (trust.py) of the owner writing directly,
or with `assist_in_groups` of a current member (client/values/group_epochs.py), drives it;
others are left pending for automations (assist/sharing.py come first) and tools. Requests
are answered one at a time, in order, as encrypted replies, then marked processed.
Never run on its own: a request pending from before a start, or older than MAX_REQUEST_AGE
(the older of our receive time and the relay's `created_at`, so a lying relay can only make
it older), stays pending and the person is told why. An answer made offline goes through the
outbox queue (client/values/send_queue.py) for ANSWER_EXPIRE_AFTER. Voice notes follow the
same rules through the options' voice pipeline (voice/).
"""

import asyncio
import logging
import time
from functools import partial
from typing import Final

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import MATCH_ALL
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.translation import async_get_exception_message

from ..client import (
    BOUNDS,
    DeviceTrust,
    OutgoingFile,
    PacerelleError,
    Request,
)
from ..const import CONF_OWNER_ID, DOMAIN
from ..limits import (
    ASSIST_ANSWER_TIMEOUT,
    MAX_REQUEST_AGE,
    MAX_SPOKEN_ANSWER_CHARS,
    MAX_VOICE_BYTES,
    MAX_VOICE_SECONDS,
)
from ..options import AgentOptions
from ..runtime import PacerelleRuntime
from ..signals import Delivered, message_signal
from ..voice.answer import SpokenAnswer, SpokenAnswerError, async_speak
from ..voice.transcripts import VOICE_PROBLEM_KEYS, VoiceOutcome, find_pipeline, voice_note
from .sharing import async_grace

_LOGGER = logging.getLogger(__name__)

# An agent (an LLM) may answer more than one message carries: the text is cut to fit, with
# an ellipsis, rather than the send failing and the person hearing nothing.
CUT_MARK: Final = "…"
# How long an answer may wait queued for a reconnection: as long as a request may wait to
# be run at all; later, it would answer a question nobody is looking at any more.
ANSWER_EXPIRE_AFTER: Final = MAX_REQUEST_AGE
CONVERSATION_ID_PREFIX: Final = "pacerelle-"
VOICE_FAILED_KEY: Final = "voice_failed"
VOICE_OFF_KEY: Final = "voice_off"


class NoAnswerError(Exception):
    """The conversation agent answered with no text."""


def ha_conversation_id(pacerelle_conversation_id: str) -> str:
    """The Home Assistant conversation of a Pacerelle conversation (never a ULID, so kept)."""
    return f"{CONVERSATION_ID_PREFIX}{pacerelle_conversation_id}"


class AssistBridge:
    """Answers one agent's owner through one conversation agent."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry[PacerelleRuntime],
        conversation_agent_id: str,
        *,
        voice_pipeline: str | None = None,
        spoken_answer: bool = False,
        in_groups: bool = False,
    ) -> None:
        self._hass = hass
        self._entry = entry
        self._owner_id = str(entry.data[CONF_OWNER_ID])
        self._conversation_agent_id = conversation_agent_id
        self._voice_pipeline = voice_pipeline
        self._spoken_answer = spoken_answer
        self._in_groups = in_groups
        self._queue: asyncio.Queue[tuple[float, Delivered]] = asyncio.Queue()
        self._conversations: dict[str, str] = {}

    @callback
    def async_start(self) -> None:
        """Listen for requests and answer them until the entry unloads: the agent's own
        (signals.py), never the bus's, where anyone may fire a `pacerelle_message`."""
        entry = self._entry
        entry.async_on_unload(
            async_dispatcher_connect(self._hass, message_signal(entry.entry_id), self._on_message)
        )
        entry.async_create_background_task(
            self._hass, self._work(), f"pacerelle assist bridge {entry.entry_id}"
        )

    @callback
    def _on_message(self, delivered: Delivered) -> None:
        request = delivered.request
        # In a group (option `assist_in_groups`) any member asks; trust decides in _answer.
        answered = self._in_groups if request.is_group else request.sender_id == self._owner_id
        if not answered:
            _LOGGER.debug("Assist bridge ignores %s from %s", request.message_id, request.sender_id)
            return
        if not request.is_chat:
            return
        if not (request.text.strip() or self._is_voice(request)):
            return
        self._queue.put_nowait((time.monotonic(), delivered))

    async def _work(self) -> None:
        while True:
            since, delivered = await self._queue.get()
            message_id = delivered.request.message_id
            try:
                await async_grace(
                    self._hass,
                    self._entry.entry_id,
                    since,
                    partial(self._entry.runtime_data.agent.handled, message_id),
                )
                await self._answer(delivered)
            except Exception:
                # One bad request must not end the bridge.
                _LOGGER.exception("Assist bridge failed on request %s", message_id)

    async def _answer(self, delivered: Delivered) -> None:
        request, trust = delivered.request, delivered.trust
        message_id = request.message_id
        # Taken whatever happens next: a transcript is not kept in memory once handled.
        outcome = self._entry.runtime_data.voice.take(message_id)
        # Marked processed or answered by something else (sharing.py); a request the agent
        # does not know at all is not taken (the answer then fails and is logged).
        if self._entry.runtime_data.agent.handled(message_id):
            _LOGGER.debug("Assist bridge leaves %s to the automation that handled it", message_id)
            return
        if request.is_group and not self._member_now(request):
            # Nothing is said: they no longer read the group (the reply would go to it).
            _LOGGER.warning(
                "Assist bridge did not run request %s: %s is no member of group %s now",
                message_id,
                request.sender_id,
                request.conversation_id,
            )
            return
        if not trust.trusted:
            _LOGGER.warning(
                "Assist bridge did not run request %s: device %s is %s, not trusted",
                message_id,
                request.sender_device_id,
                trust.state.value,
            )
            await self._tell(message_id, "assist_untrusted", trust_placeholders(trust))
            return
        age = request_age(request.received_at, request.relayed_at)
        if age > MAX_REQUEST_AGE:
            _LOGGER.warning(
                "Assist bridge did not run request %s: %.0f s old (limit %.0f s)",
                message_id,
                age,
                MAX_REQUEST_AGE,
            )
            await self._tell(message_id, "assist_too_old", {"minutes": str(int(age // 60))})
            return
        text, agent_id, language = request.text, self._conversation_agent_id, None
        pipeline: Pipeline | None = None
        if self._is_voice(request):
            pipeline = self._pipeline() if self._voice_pipeline is not None else None
            transcript = delivered.transcript
            if pipeline is None or not transcript:
                await self._tell_voice_problem(message_id, pipeline, outcome)
                return
            text, agent_id = transcript, pipeline.conversation_engine
            language = conversation_language(pipeline)
        try:
            answer = await self._ask(request, text, agent_id, language)
        except Exception:
            _LOGGER.exception(
                "Conversation agent %s could not answer Pacerelle request %s",
                agent_id,
                message_id,
            )
            answer = async_get_exception_message(DOMAIN, "assist_failed")
            pipeline = None  # an apology is not worth a voice
        answer = fitted(answer)
        spoken = await self._speak(message_id, pipeline, answer)
        agent = self._entry.runtime_data.agent
        try:
            # The spoken answer is optional: its upload failing, the text goes alone.
            files = (
                []
                if spoken is None
                else [OutgoingFile(spoken.name, spoken.mime, spoken.data, required=False)]
            )
            # Offline, the answer is queued (durably) and goes out once connected.
            await agent.send_text(
                answer,
                source_message_id=message_id,
                expire_after=ANSWER_EXPIRE_AFTER,
                files=files,
            )
            await agent.mark_processed(message_id, note=f"Answered by {agent_id} (Assist bridge)")
        except PacerelleError as err:
            # Left pending: an automation, a tool or the owner can still see it.
            _LOGGER.warning("Assist bridge could not answer request %s: %s", message_id, err)

    def _member_now(self, request: Request) -> bool:
        """Whether the sender is a member of the group as the agent knows it now (its
        current epoch's, client/values/group_epochs.py; anyone when it knows none), as for
        pacerelle.ask's response_mode: a member who left still holds an old key that
        opens, and their device may still be trusted."""
        return self._entry.runtime_data.agent.is_member_now(request)

    def _is_voice(self, request: Request) -> bool:
        """A voice note the bridge must hear: a voice pipeline is chosen, or none is and
        the note has no text to answer instead (the person is told, never silence)."""
        if voice_note(request.attachments) is None:
            return False
        return self._voice_pipeline is not None or not request.text.strip()

    def _pipeline(self) -> Pipeline | None:
        assert self._voice_pipeline is not None
        return find_pipeline(self._hass, self._voice_pipeline)

    async def _tell_voice_problem(
        self, message_id: str, pipeline: Pipeline | None, outcome: VoiceOutcome | None
    ) -> None:
        """Why a voice note was not run (never silence); it stays pending."""
        if outcome is None:
            outcome = VoiceOutcome()
        key = VOICE_PROBLEM_KEYS.get(outcome.problem or "", VOICE_FAILED_KEY)
        if self._voice_pipeline is None:
            key = VOICE_OFF_KEY
        _LOGGER.warning(
            "Assist bridge did not run voice note %s: %s",
            message_id,
            outcome.problem or ("no pipeline" if pipeline is None else "no transcript"),
        )
        placeholders = {
            "seconds": str(MAX_VOICE_SECONDS),
            "megabytes": str(MAX_VOICE_BYTES // (1024 * 1024)),
            "pipeline": pipeline.name if pipeline is not None else str(self._voice_pipeline),
        }
        await self._tell(message_id, key, placeholders)

    async def _speak(
        self, message_id: str, pipeline: Pipeline | None, answer: str
    ) -> SpokenAnswer | None:
        """The answer spoken by the voice pipeline's TTS, when asked for; None otherwise."""
        if not self._spoken_answer or pipeline is None or not pipeline.tts_engine:
            return None
        if len(answer) > MAX_SPOKEN_ANSWER_CHARS:
            _LOGGER.warning(
                "Answer to %s too long to speak (%d characters)", message_id, len(answer)
            )
            return None
        try:
            return await async_speak(self._hass, pipeline, answer)
        except Exception as err:
            # A TTS engine may raise anything: its failure must not cost the text answer.
            # Its message may quote the answer (Home Assistant's "No TTS from ... for
            # '<answer>'"): only ours (no text in them) or the type at warning, all at debug.
            shown = str(err) if isinstance(err, SpokenAnswerError) else type(err).__name__
            _LOGGER.warning("Spoken answer to %s failed, text only: %s", message_id, shown)
            _LOGGER.debug("Spoken answer to %s failed", message_id, exc_info=True)
        return None

    async def _tell(self, message_id: str, key: str, placeholders: dict[str, str]) -> None:
        """Say why a request was not run; the request stays pending for automations."""
        text = async_get_exception_message(DOMAIN, key, placeholders)
        try:
            await self._entry.runtime_data.agent.send_text(text, source_message_id=message_id)
        except PacerelleError as err:
            _LOGGER.warning("Assist bridge could not answer request %s: %s", message_id, err)

    async def _ask(self, request: Request, text: str, agent_id: str, language: str | None) -> str:
        conversation_id = request.conversation_id
        async with asyncio.timeout(ASSIST_ANSWER_TIMEOUT):
            result = await conversation.async_converse(
                self._hass,
                text,
                self._conversations.get(conversation_id, ha_conversation_id(conversation_id)),
                Context(),
                language=language,
                agent_id=agent_id,
            )
        if result.conversation_id:
            self._conversations[conversation_id] = result.conversation_id
        speech = result.response.speech.get("plain", {}).get("speech")
        if not isinstance(speech, str) or not speech.strip():
            raise NoAnswerError(f"{agent_id} gave no spoken answer")
        return speech


def fitted(answer: str) -> str:
    """The answer, cut with CUT_MARK if it is longer than one message may carry."""
    if len(answer) <= BOUNDS.send_text_chars:
        return answer
    return answer[: BOUNDS.send_text_chars - len(CUT_MARK)] + CUT_MARK


def conversation_language(pipeline: Pipeline) -> str:
    """The language a pipeline speaks to its agent: an LLM agent's `*` (every language)
    becomes the pipeline's spoken language, as the pipeline's own intent stage does."""
    if pipeline.conversation_language != MATCH_ALL:
        return pipeline.conversation_language
    return pipeline.stt_language or pipeline.tts_language or pipeline.language


def request_age(received_at: float, relayed_at: float | None, now: float | None = None) -> float:
    """Seconds since the oldest time the request may date from: our receive time, or the
    relay's when it is older (a relay's later time never makes a request younger)."""
    earliest = received_at if relayed_at is None else min(received_at, relayed_at)
    return (time.time() if now is None else now) - earliest


@callback
def async_setup_assist_bridge(hass: HomeAssistant, entry: ConfigEntry[PacerelleRuntime]) -> None:
    """Start the entry's bridge if its options choose a conversation agent."""
    options = AgentOptions.from_options(entry.options)
    if options.assist_agent:
        AssistBridge(
            hass,
            entry,
            options.assist_agent,
            voice_pipeline=options.voice_pipeline,
            spoken_answer=options.voice_spoken_answer,
            in_groups=options.assist_in_groups,
        ).async_start()


def trust_placeholders(trust: DeviceTrust) -> dict[str, str]:
    """`state` and `code` of a request's own judgement (client/trust/door.py), for the
    answers that tell a device it is not trusted yet: the code of the very key that wrote it
    (in a group, the key of the session that delivered the member's key)."""
    return {"state": trust.state.value, "code": trust.code}
