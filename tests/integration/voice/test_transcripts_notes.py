"""voice.py on Home Assistant's real pipeline: one note at a time per person, whose notes
are wanted, and what an outcome becomes at delivery."""

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.assist.bridge import conversation_language
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.trust_book import DeviceTrust, TrustState
from custom_components.pacerelle.events import MessageEvents
from custom_components.pacerelle.limits import MAX_VOICE_BYTES, MAX_VOICE_SECONDS
from custom_components.pacerelle.voice.audio import VoiceAudioError
from custom_components.pacerelle.voice.transcripts import (
    DOWNLOAD_FAILED,
    VoiceNotes,
    VoiceOutcome,
    VoicePolicy,
    check_declared_bounds,
)
from tests.helpers.runtime import wait_until
from tests.helpers.voice_assist import VoiceAssistant, async_voice_assistant, wav_note

OWNER = "usr_owner"
NOTE = {"id": "a1", "name": "note.wav", "mime": "audio/wav", "size": 16044, "duration_ms": 500}


def request(message_id: str, sender: str = OWNER, *, group: bool = False) -> Request:
    """A voice note's request, judged trusted when opened."""
    conversation = "conv_1"
    return Request(
        message_id=message_id,
        conversation_id=conversation,
        sender_id=sender,
        sender_device_id="1",
        to=f"group:{conversation}" if group else "agt_home",
        encrypted=True,
        kind="chat.message",
        text="",
        reply_to_message_id=None,
        received_at=time.time(),
        attachments=(NOTE,),
        sender_identity=b"k",
        trust_device_id="1",
        trust_state=TrustState.TRUSTED,
    )


def judged(asked: Request, state: TrustState) -> DeviceTrust:
    """`asked`'s key judged `state` (as the door would judge it again at delivery)."""
    return DeviceTrust(asked.sender_id, asked.sender_device_id, b"k", state)


def policy(pipeline_id: str | None, **changes: Any) -> VoicePolicy:
    return VoicePolicy(
        **{
            "pipeline_id": pipeline_id,
            "owner_id": OWNER,
            "bridge_on": True,
            "every_trusted_device": False,
            **changes,
        }
    )


@pytest.fixture
async def voice(hass: HomeAssistant) -> VoiceAssistant:
    return await async_voice_assistant(hass)


async def test_one_note_at_a_time_per_person(hass: HomeAssistant, voice: VoiceAssistant) -> None:
    notes = VoiceNotes(hass, policy(voice.pipeline.id, every_trusted_device=True))
    data, _ = wav_note(0.25)

    async def download(_attachment: Mapping[str, Any]) -> bytes:
        return data

    voice.stt.hold = asyncio.Event()
    # Two people at once are heard at once; one person's two notes one after the other.
    tasks = [
        asyncio.create_task(notes.async_transcribe(request(m, s), NOTE, download))
        for m, s in (("m1", OWNER), ("m2", OWNER), ("m3", "usr_ana"))
    ]
    await wait_until(lambda: voice.stt.active == 2)
    await asyncio.sleep(0.1)  # time for the owner's second note, were it not waiting
    assert voice.stt.active == 2
    voice.stt.hold.set()
    outcomes = await asyncio.gather(*tasks)
    assert [o.transcript for o in outcomes] == [voice.stt.text] * 3
    assert voice.stt.most_active == 2
    assert len(voice.stt.calls) == 3


async def test_whose_notes_are_wanted(hass: HomeAssistant) -> None:
    trusted, unverified = TrustState.TRUSTED, TrustState.UNVERIFIED
    cases = [
        # (policy, the request's judgement when opened, request, wanted)
        (policy(None), trusted, request("m"), False),  # no pipeline
        (policy("p"), trusted, request("m"), True),  # the owner, bridge on
        (policy("p"), unverified, request("m"), False),  # never an untrusted device
        (policy("p"), trusted, request("m", "usr_ana"), False),  # not the bridge's
        (policy("p", every_trusted_device=True), trusted, request("m", "usr_ana"), True),
        (policy("p", every_trusted_device=True), unverified, request("m", "usr_ana"), False),
        (policy("p"), trusted, request("m", "usr_ana", group=True), False),  # groups off
        (policy("p", in_groups=True), trusted, request("m", "usr_ana", group=True), True),
        (policy("p", bridge_on=False), trusted, request("m"), False),
    ]
    for rule, state, asked, wanted in cases:
        found = VoiceNotes(hass, rule).wanted(replace(asked, trust_state=state))
        assert (found is not None) == wanted, (rule, asked.sender_id, asked.is_group)
    text_only = replace(request("m"), attachments=({"id": "p", "mime": "image/png"},))
    assert VoiceNotes(hass, policy("p")).wanted(text_only) is None


def test_declared_bounds_refuse_before_any_download() -> None:
    check_declared_bounds(NOTE)
    check_declared_bounds({"mime": "audio/ogg"})  # nothing declared: the download decides
    limits = [
        ({"duration_ms": MAX_VOICE_SECONDS * 1000 + 1}, "too_long"),
        ({"size": MAX_VOICE_BYTES + 1}, "too_large"),
    ]
    for declared, reason in limits:
        with pytest.raises(VoiceAudioError) as refused:
            check_declared_bounds({**NOTE, **declared})
        assert refused.value.reason == reason
    check_declared_bounds({**NOTE, "duration_ms": MAX_VOICE_SECONDS * 1000})


async def test_a_failure_of_any_kind_is_an_outcome_not_an_exception(
    hass: HomeAssistant, voice: VoiceAssistant
) -> None:
    notes = VoiceNotes(hass, policy(voice.pipeline.id))

    async def download(_attachment: Mapping[str, Any]) -> bytes:
        raise RuntimeError("a bug somewhere below")

    outcome = await notes.async_transcribe(request("m1"), NOTE, download)
    assert (outcome.transcript, outcome.problem) == (None, "stt_failed")
    assert notes.take("m1") == outcome
    assert voice.stt.calls == []


def test_an_llm_pipeline_talks_to_its_agent_in_its_spoken_language() -> None:
    spoken = Pipeline(
        conversation_engine="conversation.llm",
        conversation_language=MATCH_ALL,
        language="fr",
        name="LLM",
        stt_engine="stt.x",
        stt_language="fr-CA",
        tts_engine=None,
        tts_language=None,
        tts_voice=None,
        wake_word_entity=None,
        wake_word_id=None,
    )
    assert conversation_language(spoken) == "fr-CA"
    assert conversation_language(replace(spoken, stt_language=None)) == "fr"
    assert conversation_language(replace(spoken, conversation_language="de")) == "de"


async def test_a_device_distrusted_before_delivery_gets_no_transcript(
    hass: HomeAssistant, voice: VoiceAssistant
) -> None:
    notes = VoiceNotes(hass, policy(voice.pipeline.id))
    data, _ = wav_note(0.25)

    async def download(_attachment: Mapping[str, Any]) -> bytes:
        return data

    asked = request("m1")
    outcome = await notes.async_transcribe(asked, NOTE, download)
    assert outcome.transcript == voice.stt.text
    # Blocked (or its key changed) while the note was being heard: judged again at delivery.
    assert notes.delivered(asked, judged(asked, TrustState.BLOCKED)) is None
    assert notes.take("m1") is None  # and forgotten
    # Trusted still: the transcript; kept for the bridge, which answers the owner.
    await notes.async_transcribe(request("m2"), NOTE, download)
    assert notes.delivered(request("m2"), judged(asked, TrustState.TRUSTED)) == voice.stt.text
    assert notes.take("m2") == outcome


async def test_a_persons_later_note_waits_its_turn_without_losing_its_download(
    hass: HomeAssistant, voice: VoiceAssistant
) -> None:
    """Two notes of one person prepared together (one inbox batch): the second waits for
    the first's speech-to-text; that wait is not the relay's slowness and must not use up
    its download deadline (it did: 'could not listen' and its file unsaved)."""
    deadline = 0.3
    notes = VoiceNotes(hass, policy(voice.pipeline.id, every_trusted_device=True))
    data, _ = wav_note(0.25)

    async def download(_message_id: str, _index: int) -> bytes:
        await asyncio.sleep(0)  # a real download waits for the relay
        return data

    events = MessageEvents(hass, "entry", "agt_home", "", download_deadline=deadline, voice=notes)
    voice.stt.hold = asyncio.Event()
    first, second = request("m1"), request("m2")
    preparing = [events.prepare(first, download), events.prepare(second, download)]
    assert all(p is not None for p in preparing)
    both = asyncio.gather(*(p for p in preparing if p is not None))
    await wait_until(lambda: voice.stt.active == 1)
    await asyncio.sleep(deadline * 2)  # the first note is heard for longer than the deadline
    voice.stt.hold.set()
    await both
    assert notes.take("m1") == VoiceOutcome(transcript=voice.stt.text)
    assert notes.take("m2") == VoiceOutcome(transcript=voice.stt.text)


async def test_a_note_not_downloaded_in_time_is_a_failed_download(
    hass: HomeAssistant, voice: VoiceAssistant
) -> None:
    """Past its download deadline the note is told as not downloaded (its own answer),
    not as a speech-to-text failure."""
    notes = VoiceNotes(hass, policy(voice.pipeline.id, every_trusted_device=True))

    async def never(_message_id: str, _index: int) -> bytes:
        await asyncio.Event().wait()
        raise AssertionError

    events = MessageEvents(hass, "entry", "agt_home", "", download_deadline=0.05, voice=notes)
    preparing = events.prepare(request("m1"), never)
    assert preparing is not None
    await preparing
    assert notes.take("m1") == VoiceOutcome(problem=DOWNLOAD_FAILED)
