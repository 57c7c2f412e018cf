"""Voice notes through Assist: a note from the owner's phone runs a command and is answered
in text and voice; bad notes get a reason; untrusted devices reach no speech engine."""

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from homeassistant.components.assist_pipeline import OPTION_PREFERRED
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.limits import MAX_VOICE_SECONDS
from custom_components.pacerelle.options import (
    CONF_ASSIST_AGENT,
    CONF_MEDIA_FOLDER,
    CONF_VOICE_PIPELINE,
    CONF_VOICE_SPOKEN_ANSWER,
    CONF_VOICE_TRANSCRIPTS,
)
from custom_components.pacerelle.runtime import PacerelleRuntime
from custom_components.pacerelle.voice import transcripts as voice_module
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held
from tests.helpers.runtime import wait_until
from tests.helpers.voice import make_audio, send_voice_note, wait_received_audio
from tests.helpers.voice_assist import (
    SAMPLE_RATE,
    SPOKEN_PREFIX,
    VoiceAssistant,
    async_voice_assistant,
    wav_note,
)

TRANSCRIPT = "turn on the kitchen light"
ANSWER = "Turned on the light"


@pytest.fixture
async def voice(hass: HomeAssistant) -> VoiceAssistant:
    return await async_voice_assistant(hass)


def bridge_options(voice: VoiceAssistant, **more: Any) -> dict[str, Any]:
    return {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_VOICE_PIPELINE: voice.pipeline.id, **more}


async def inbox_of(emulator: EmulatorHandle, conversation: str, count: int) -> list[Any]:
    return await emulator.wait_inbox(conversation, count, within=10)


@pytest.mark.usefixtures("kitchen_light")
async def test_a_voice_note_turns_on_the_light_and_is_answered_in_text_and_voice(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    started = await start_agent(
        hass, emulator, options=bridge_options(voice, **{CONF_VOICE_SPOKEN_ANSWER: True})
    )
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    events = async_capture_events(hass, EVENT_MESSAGE)
    note, pcm_bytes = wav_note(1.5)

    asked = await send_voice_note(
        emulator, installed.conversation_id, note, "audio/wav", duration_ms=1500
    )
    [spoken] = await wait_received_audio(emulator, installed.conversation_id, 1, within=10)

    assert hass.states.get(KITCHEN).state == "on"
    assert voice.stt.calls == [pcm_bytes]  # the whole note, as 16 kHz mono PCM
    assert voice.stt.language == [voice.pipeline.stt_language]
    # The answer's text and its voice, decrypted on the person's phone, in one reply.
    assert spoken.text == ANSWER
    assert spoken.data == SPOKEN_PREFIX + ANSWER.encode()
    assert spoken.mime == "audio/mpeg"
    assert voice.tts.messages == [ANSWER]
    tts_cache = Path(hass.config.path("tts"))
    assert not await hass.async_add_executor_job(lambda: list(tts_cache.glob("*")))
    [reply] = await emulator.inbox(installed.conversation_id)
    assert reply["reply_to_message_id"] == asked
    [event] = events
    assert event.data["message_id"] == asked
    assert event.data["transcript"] == TRANSCRIPT
    assert event.data["attachments"][0]["mime"] == "audio/wav"
    await wait_until(lambda: runtime.status.pending == 0)
    handled = runtime.agent.data.history.requests[-1]
    assert handled.note == f"Answered by {voice.pipeline.conversation_engine} (Assist bridge)"
    assert runtime.voice is not None
    assert runtime.voice.take(asked) is None  # the transcript is not kept once answered


@pytest.mark.usefixtures("kitchen_light")
async def test_the_preferred_voice_assistant_answers_in_text_only(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    # "preferred": whichever voice assistant Home Assistant prefers when the note comes.
    hass.data[KEY_ASSIST_PIPELINE].pipeline_store.async_set_preferred_item(voice.pipeline.id)
    options = bridge_options(voice, **{CONF_VOICE_PIPELINE: OPTION_PREFERRED})
    installed = (await start_agent(hass, emulator, options=options)).installed
    note, _ = wav_note(0.5)
    await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", duration_ms=500)
    [reply] = await inbox_of(emulator, installed.conversation_id, 1)
    assert (reply["kind"], reply["text"]) == ("text", ANSWER)
    assert hass.states.get(KITCHEN).state == "on"
    assert voice.tts.messages == []


@pytest.mark.usefixtures("kitchen_light")
async def test_an_unsupported_format_gets_a_clear_answer_and_stays_pending(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    started = await start_agent(hass, emulator, options=bridge_options(voice))
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    events = async_capture_events(hass, EVENT_MESSAGE)
    asked = await send_voice_note(
        emulator, installed.conversation_id, b"#!AMR\n" + bytes(400), "audio/amr", None
    )
    [reply] = await inbox_of(emulator, installed.conversation_id, 1)
    assert reply["text"].startswith("Home Assistant cannot play this voice note's audio format")
    assert reply["reply_to_message_id"] == asked
    assert voice.stt.calls == []
    assert hass.states.get(KITCHEN).state == "off"
    assert events[0].data["transcript"] is None
    assert [r.message_id for r in runtime.agent.pending_requests()] == [asked]


@pytest.mark.usefixtures("kitchen_light")
async def test_an_over_long_note_is_refused_before_it_is_downloaded(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    voice: VoiceAssistant,
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = await start_agent(hass, emulator, options=bridge_options(voice))
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    note, _ = wav_note(0.2)  # says it lasts longer than the limit
    declared = (MAX_VOICE_SECONDS + 1) * 1000
    asked = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", declared)
    [reply] = await inbox_of(emulator, installed.conversation_id, 1)
    assert reply["text"] == (
        f"This voice note is longer than {MAX_VOICE_SECONDS} seconds, too long for a command. "
        "Please send a shorter one, or type your request"
    )
    assert not [r for r in caplog.records if "/agent/blobs/" in r.getMessage()]
    assert voice.stt.calls == []
    assert hass.states.get(KITCHEN).state == "off"
    assert [r.message_id for r in runtime.agent.pending_requests()] == [asked]


@pytest.mark.usefixtures("kitchen_light")
async def test_an_untrusted_device_note_reaches_no_speech_engine(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    installed = (await start_agent(hass, emulator, options=bridge_options(voice))).installed
    conversation = installed.conversation_id
    events = async_capture_events(hass, EVENT_MESSAGE)
    await emulator.send(conversation, text="hello")  # device 1: the owner's, trusted
    await inbox_of(emulator, conversation, 1)
    note, _ = wav_note(0.5)
    # A second device the owner has not trusted (or the relay's own) sends a voice note.
    await send_voice_note(emulator, conversation, note, "audio/wav", 500, device_id="2")
    [_, refusal] = await inbox_of(emulator, conversation, 2)
    assert "a device it does not trust yet (unverified)" in refusal["text"]
    assert voice.stt.calls == []
    assert hass.states.get(KITCHEN).state == "off"
    assert (events[1].data["trust_state"], events[1].data["transcript"]) == ("unverified", None)


@pytest.mark.usefixtures("kitchen_light")
async def test_with_the_bridge_off_transcripts_reach_automations_and_nobody_answers(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    options = {CONF_VOICE_PIPELINE: voice.pipeline.id, CONF_VOICE_TRANSCRIPTS: True}
    started = await start_agent(hass, emulator, options=options)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    events = async_capture_events(hass, EVENT_MESSAGE)
    note, pcm_bytes = wav_note(0.5)
    asked = await send_voice_note(
        emulator, installed.conversation_id, note, "audio/wav", duration_ms=500
    )
    await held(runtime, asked)
    await wait_until(lambda: len(events) == 1)
    assert events[0].data["transcript"] == TRANSCRIPT
    assert voice.stt.calls == [pcm_bytes]
    await hass.async_block_till_done()
    assert await emulator.inbox(installed.conversation_id) == []
    assert hass.states.get(KITCHEN).state == "off"


async def test_without_a_voice_pipeline_nothing_is_transcribed(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    started = await start_agent(hass, emulator, options={CONF_VOICE_TRANSCRIPTS: True})
    installed, entry = started.installed, started.entry
    events = async_capture_events(hass, EVENT_MESSAGE)
    note, _ = wav_note(0.5)
    asked = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    await held(entry.runtime_data, asked)
    await wait_until(lambda: len(events) == 1)
    assert events[0].data["transcript"] is None
    assert voice.stt.calls == []


@pytest.mark.usefixtures("kitchen_light")
@pytest.mark.parametrize(
    ("heard", "hangs", "answer"),
    [
        ("", False, "Home Assistant heard no words in this voice note"),
        (TRANSCRIPT, True, "Home Assistant took too long to understand this voice note"),
    ],
)
async def test_a_note_not_understood_gets_a_reason_and_stays_pending(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    voice: VoiceAssistant,
    monkeypatch: pytest.MonkeyPatch,
    heard: str,
    hangs: bool,
    answer: str,
) -> None:
    monkeypatch.setattr(voice_module, "VOICE_PIPELINE_TIMEOUT", 0.3)
    voice.stt.text = heard
    voice.stt.hold = asyncio.Event() if hangs else None
    started = await start_agent(hass, emulator, options=bridge_options(voice))
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    note, _ = wav_note(0.5)
    asked = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    [reply] = await inbox_of(emulator, installed.conversation_id, 1)
    assert reply["text"].startswith(answer)
    assert hass.states.get(KITCHEN).state == "off"
    assert [r.message_id for r in runtime.agent.pending_requests()] == [asked]


@pytest.mark.usefixtures("kitchen_light")
async def test_an_ogg_opus_note_is_converted_and_saved_once_downloaded(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    voice: VoiceAssistant,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    media = tmp_path / "media" / "pacerelle"
    media.mkdir(parents=True)
    hass.config.allowlist_external_dirs = {str(tmp_path / "media")}
    options = bridge_options(voice, **{CONF_MEDIA_FOLDER: str(media)})
    installed = (await start_agent(hass, emulator, options=options)).installed
    events = async_capture_events(hass, EVENT_MESSAGE)
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    note, mime = await make_audio(1.0, "ogg")  # what phones send: Opus in Ogg
    asked = await send_voice_note(emulator, installed.conversation_id, note, mime)
    # Sent right after: its event waits for the note's transcript.
    text_id = await emulator.send(installed.conversation_id, text="thanks")
    await wait_until(lambda: len(events) == 2)
    assert [e.data["message_id"] for e in events] == [asked, text_id]
    assert events[0].data["transcript"] == TRANSCRIPT
    [heard] = voice.stt.calls
    assert abs(heard - SAMPLE_RATE * 2) <= SAMPLE_RATE * 2 // 10  # about 1 s of 16 kHz PCM
    # Saved as sent, from the one download speech-to-text used.
    path = events[0].data["attachments"][0]["path"]
    assert Path(path).read_bytes() == note
    downloads = [r for r in caplog.records if "/agent/blobs/" in r.getMessage()]
    assert len(downloads) == 1
    # Both answered before the test ends: Assist's handling of "thanks" runs in Home
    # Assistant's executor, which its stop would interrupt (SystemExit) if still running.
    replies = await inbox_of(emulator, installed.conversation_id, 2)
    assert {r["reply_to_message_id"] for r in replies} == {asked, text_id}
    assert hass.states.get(KITCHEN).state == "on"


@pytest.mark.usefixtures("kitchen_light")
async def test_a_failing_voice_still_gets_the_text_answer(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    voice.tts.broken = True
    options = bridge_options(voice, **{CONF_VOICE_SPOKEN_ANSWER: True})
    started = await start_agent(hass, emulator, options=options)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    note, _ = wav_note(0.5)
    await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    [reply] = await inbox_of(emulator, installed.conversation_id, 1)
    assert (reply["kind"], reply["text"]) == ("text", ANSWER)
    assert voice.tts.messages == [ANSWER]
    assert hass.states.get(KITCHEN).state == "on"
    await wait_until(lambda: runtime.status.pending == 0)


@pytest.mark.usefixtures("kitchen_light")
async def test_with_no_voice_assistant_chosen_the_owner_is_told(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    options = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT}
    started = await start_agent(hass, emulator, options=options)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    conversation = installed.conversation_id
    note, _ = wav_note(0.5)
    asked = await send_voice_note(emulator, conversation, note, "audio/wav", 500)
    [told] = await inbox_of(emulator, conversation, 1)
    assert told["text"].startswith("Home Assistant is not set up to listen to voice notes")
    # A note with text is answered by its text, as before voice notes.
    await send_voice_note(emulator, conversation, note, "audio/wav", 500, text=TRANSCRIPT)
    [_, answered] = await inbox_of(emulator, conversation, 2)
    assert answered["text"] == ANSWER
    assert voice.stt.calls == []
    await wait_until(lambda: [r.message_id for r in runtime.agent.pending_requests()] == [asked])


@pytest.mark.usefixtures("kitchen_light")
async def test_a_deleted_voice_assistant_is_a_told_failure(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    options = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_VOICE_PIPELINE: "01NOSUCHPIPELINE"}
    installed = (await start_agent(hass, emulator, options=options)).installed
    note, _ = wav_note(0.5)
    await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)
    [told] = await inbox_of(emulator, installed.conversation_id, 1)
    assert told["text"].startswith("Home Assistant could not listen to this voice note")
    assert voice.stt.calls == []


@pytest.mark.usefixtures("kitchen_light")
async def test_a_blocked_device_note_is_dropped_unheard(
    hass: HomeAssistant, emulator: EmulatorHandle, voice: VoiceAssistant
) -> None:
    started = await start_agent(hass, emulator, options=bridge_options(voice))
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    assert runtime.trust is not None
    conversation = installed.conversation_id
    events = async_capture_events(hass, EVENT_MESSAGE)
    await emulator.send(conversation, text="hello", device_id="2")
    await wait_until(lambda: len(events) == 1)
    owner = installed.owner_id
    key = runtime.trust.book.get(owner, "2").identity_key
    await runtime.trust.async_decide(owner, "2", TrustState.BLOCKED, key=key)
    note, _ = wav_note(0.5)
    dropped = await send_voice_note(emulator, conversation, note, "audio/wav", 500, device_id="2")
    # Refused when opened (client/trust/door.py): never pending, never in the history.
    await wait_until(lambda: dropped in runtime.agent.data.inbox.rejected)
    assert runtime.agent.find_request(dropped) is None
    assert len(events) == 1
    assert voice.stt.calls == []
    assert hass.states.get(KITCHEN).state == "off"
