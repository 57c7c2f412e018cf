"""The events an agent fires on Home Assistant's bus: their names and stable data.

They are for users' automations, and anything may fire them: the integration's own
consumers get the typed request by signal instead, right after each event (signals.py).
Each event's fields and when it fires are documented once, in README.md "Events"; a
field is only ever added. Events keep arrival order: a request's files and voice note are
prepared (bounded in time and number, limits.py) before its event and those after it fire.
"""

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from homeassistant.core import Context, Event, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_send

from .client import DeviceTrust, Request
from .files.attachments import Download, DownloadTimeoutError, async_save_incoming
from .limits import DOWNLOAD_DEADLINE, MAX_CONCURRENT_DOWNLOADS
from .signals import (
    Delivered,
    WidgetAnswer,
    event_signal,
    message_signal,
    widget_answer_signal,
)
from .voice.transcripts import VoiceNotes

_LOGGER = logging.getLogger(__name__)

EVENT_MESSAGE: Final = "pacerelle_message"
EVENT_WIDGET_RESPONSE: Final = "pacerelle_widget_response"
EVENT_DECRYPTION_FAILED: Final = "pacerelle_decryption_failed"
EVENT_MESSAGE_STATUS: Final = "pacerelle_message_status"

ATTR_ENTRY_ID: Final = "entry_id"
ATTR_AGENT_ID: Final = "agent_id"
ATTR_WIDGET_ID: Final = "widget_id"


def message_status_data(
    entry_id: str, agent_id: str, message_id: str, conversation_id: str, status: str
) -> dict[str, Any]:
    """The data of `pacerelle_message_status`."""
    return {
        ATTR_ENTRY_ID: entry_id,
        ATTR_AGENT_ID: agent_id,
        "message_id": message_id,
        "conversation_id": conversation_id,
        "status": status,
    }


def event_data(
    entry_id: str,
    agent_id: str,
    request: Request,
    saved: Mapping[str, str | None] | None = None,
    trust: DeviceTrust | None = None,
    transcript: str | None = None,
) -> dict[str, Any]:
    """`pacerelle_message` data: no secrets (attachment keys stay in the store).

    `saved` maps attachment ids to where they were written (None: failed); without it the
    attachments carry no `path`. `transcript`: the voice note's text (voice.py). `trust`:
    the request's own judgement unless given (the same, read by the caller).
    """
    attachments = []
    for item in request.attachments:
        public = dict(item)  # the client hands the host only its public fields
        if saved is not None:
            public["path"] = saved.get(str(item.get("id")))
        attachments.append(public)
    answer = request.answer
    return {
        **_who_and_where(entry_id, agent_id, request),
        "group": request.is_group,
        "kind": request.kind,
        "text": request.text,
        "reply_to_message_id": request.reply_to_message_id,
        "attachments": attachments,
        "widget": dict(request.widget) if request.widget is not None else None,
        "widget_response": (
            {ATTR_WIDGET_ID: answer.ref, "value": answer.value, "cancelled": answer.cancelled}
            if answer is not None
            else None
        ),
        "received_at": _iso(request.received_at),
        "relayed_at": _iso(request.relayed_at) if request.relayed_at is not None else None,
        "transcript": transcript,
        **trust_fields(trust or request.judged),
    }


def _who_and_where(entry_id: str, agent_id: str, request: Request) -> dict[str, Any]:
    """The fields both events of a request start with: its agent, conversation and sender."""
    return {
        ATTR_ENTRY_ID: entry_id,
        ATTR_AGENT_ID: agent_id,
        "conversation_id": request.conversation_id,
        "message_id": request.message_id,
        "sender_id": request.sender_id,
        "sender_device_id": request.sender_device_id,
    }


def trust_fields(trust: DeviceTrust) -> dict[str, Any]:
    """`trusted` and `trust_state` of a request's judgement (inbox.Request.judged)."""
    return {"trusted": trust.trusted, "trust_state": trust.state.value}


def widget_response_data(
    entry_id: str, agent_id: str, request: Request, trust: DeviceTrust | None = None
) -> dict[str, Any] | None:
    """`pacerelle_widget_response` data, or None when the request is no widget answer."""
    answer = request.answer
    if answer is None:
        return None
    return {
        **_who_and_where(entry_id, agent_id, request),
        ATTR_WIDGET_ID: answer.ref,
        "value": None if answer.cancelled else answer.value,
        "cancelled": answer.cancelled,
        "received_at": _iso(request.received_at),
        **trust_fields(trust or request.judged),
    }


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


class MessageEvents:
    """Fires an entry's events, saving a message's files (when a folder is set) and
    transcribing its voice note (when `voice` wants it) first.

    `prepare` and `deliver` are the agent's hand-over hooks: the inbox pipeline awaits
    `prepare` (the files) before it saves the request as accepted, then calls `deliver`
    (the events) right after that save, so an event never fires for a request that could
    still be handed over again, and no file is saved after its event.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        agent_id: str,
        media_folder: str,
        *,
        download_deadline: float = DOWNLOAD_DEADLINE,
        max_downloads: int = MAX_CONCURRENT_DOWNLOADS,
        voice: VoiceNotes | None = None,
    ) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._agent_id = agent_id
        self._media_folder = media_folder
        self._download_deadline = download_deadline
        self._downloads = asyncio.Semaphore(max_downloads)
        self._voice = voice
        self._saved: dict[str, Mapping[str, str | None]] = {}

    def prepare(self, request: Request, download: Download) -> Awaitable[None] | None:
        """Transcribe the request's voice note, if wanted, and save its files into the
        media folder, when one is set (`download`: the agent's, for its files)."""
        note = self._voice.wanted(request) if self._voice is not None else None
        save = bool(self._media_folder and request.attachments)
        if note is None and not save:
            return None
        return self._prepare(request, note, save, download)

    async def _prepare(
        self, request: Request, note: Mapping[str, Any] | None, save: bool, download: Download
    ) -> None:
        loop = asyncio.get_running_loop()
        # The voice note's bytes, once downloaded for speech-to-text, are saved as they are.
        fetched: dict[str, bytes] = {}

        async def fetch(index: int, deadline: float) -> bytes:
            key = str(request.attachments[index].get("id"))
            if key in fetched:
                return fetched.pop(key)
            try:
                async with asyncio.timeout_at(deadline), self._downloads:
                    data = await download(request.message_id, index)
            except TimeoutError:
                # async_save_incoming marks the file unsaved and goes on.
                raise DownloadTimeoutError(
                    f"download not done within {self._download_deadline:g} s"
                ) from None
            if save and note is not None and key == str(note.get("id")):
                fetched[key] = data
            return data

        # Each deadline starts when its downloads may: the note's once the person's earlier
        # notes are heard (voice.py's lock), the files' once the note is; those waits are
        # not the relay's slowness.
        if note is not None and self._voice is not None:
            # The note is the first attachment equal to it (voice_note: the first audio one).
            at = request.attachments.index(note)
            await self._voice.async_transcribe(
                request, note, lambda _note: fetch(at, loop.time() + self._download_deadline)
            )
        if save:
            deadline = loop.time() + self._download_deadline
            saved = await async_save_incoming(
                self._hass,
                self._media_folder,
                request,
                lambda _message_id, index: fetch(index, deadline),
            )
            self._saved[request.message_id] = saved

    @callback
    def deliver(self, request: Request) -> None:
        """Fire the request's events, with where its files were saved and the one trust
        judgement the request carries (made when it was opened, client/trust/door.py: a
        blocked key's request never gets here)."""
        saved = self._saved.pop(request.message_id, None)
        trust = request.judged
        transcript = self._voice.delivered(request, trust) if self._voice is not None else None
        self._fire(request, saved, trust, transcript)

    @callback
    def _fire(
        self,
        request: Request,
        saved: Mapping[str, str | None] | None,
        trust: DeviceTrust | None,
        transcript: str | None,
    ) -> None:
        # Each bus event (for users' automations) first, then its signal (the
        # integration's own consumers, signals.py): automations start first.
        hass, entry_id = self._hass, self._entry_id
        data = event_data(entry_id, self._agent_id, request, saved, trust, transcript)
        self._fire_event(EVENT_MESSAGE, data)
        async_dispatcher_send(hass, message_signal(entry_id), Delivered(request, saved, transcript))
        answer = widget_response_data(entry_id, self._agent_id, request, trust)
        response = request.answer
        if answer is not None and response is not None:
            self._fire_event(EVENT_WIDGET_RESPONSE, answer)
            async_dispatcher_send(
                hass, widget_answer_signal(entry_id), WidgetAnswer(request, response)
            )

    @callback
    def _fire_event(self, event_type: str, data: dict[str, Any]) -> None:
        """The bus event, and the same event (type, data, context) to the device triggers
        (device_trigger.py), which must not take a forged bus event for the agent's."""
        context = Context()
        self._hass.bus.async_fire(event_type, data, context=context)
        event = Event(event_type, data, context=context)
        async_dispatcher_send(self._hass, event_signal(self._entry_id), event)
