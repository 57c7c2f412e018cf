"""Voice notes in the emulator (issue 19): sent by a person's device, answered by an agent.

The emulator is a real server over TCP, the agent the reference agent (native libsignal),
the audio real Opus/AAC made by ffmpeg.
"""

import asyncio
import base64
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.emulator import EmulatorConfig
from tests.emulator.agent_api import GCM_TAG_BYTES
from tests.emulator.reference_agent import ReferenceAgent
from tests.emulator.sdk_echo import EchoAgent, load_sdk, runtime_token, stop_echo
from tests.emulator.state import Json
from tests.helpers.emulator import AdminError, EmulatorHandle, Installed, running_emulator
from tests.helpers.voice import (
    audio_duration_ms,
    make_audio,
    received_audio,
    send_voice_note,
    wait_received_audio,
)

# ffprobe's reading of a 1.5 s tone: Opus adds its pre-skip and padding.
DURATION_SLACK_MS = 40


async def _online(emulator: EmulatorHandle) -> tuple[Installed, ReferenceAgent]:
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    await agent.connect()
    return installed, agent


async def _next_msg(agent: ReferenceAgent) -> Json:
    while True:
        frame = await agent.frame()
        if frame.get("type") == "MSG":
            return frame


@pytest.mark.parametrize("fmt", ["ogg", "m4a"])
async def test_voice_note_reaches_the_agent_encrypted(emulator: EmulatorHandle, fmt: str) -> None:
    """Only the redacted part is public; inside: audio mime, duration, the same bytes."""
    installed, agent = await _online(emulator)
    audio, mime = await make_audio(1.5, fmt)
    message_id = await send_voice_note(emulator, installed.conversation_id, audio, mime)

    envelope = await _next_msg(agent)
    assert envelope["id"] == message_id
    [public] = envelope["attachments"]
    assert set(public) == {"id", "name", "mime", "size", "blob_id", "sha256"}
    assert (public["name"], public["mime"], public["size"]) == (
        "attachment",
        "application/octet-stream",
        len(audio),
    )
    payload = json.loads(agent.open(envelope))
    assert payload["kind"] == "chat.message"
    [secret] = payload["attachments"]
    assert (secret["id"], secret["blob_id"]) == (public["id"], public["blob_id"])
    assert secret["mime"] == mime
    assert secret["name"] == f"voice-note.{mime.split('/')[1]}"
    assert abs(secret["duration_ms"] - 1500) <= DURATION_SLACK_MS
    assert secret["size"] == len(audio)

    async with emulator.session.get(
        f"{emulator.base_url}/agent/blobs/{public['blob_id']}",
        headers={"Authorization": f"Bearer {agent.token}"},
    ) as response:
        sealed = await response.read()
    assert hashlib.sha256(sealed).hexdigest() == public["sha256"]
    assert audio not in sealed
    opened = AESGCM(base64.b64decode(secret["key_b64"])).decrypt(
        base64.b64decode(secret["iv_b64"]), sealed, None
    )
    assert opened == audio
    await agent.close()


async def test_voice_note_duration_given_or_left_out(emulator: EmulatorHandle) -> None:
    """A test may set the duration (a lying app) or leave it out (an old app)."""
    installed, agent = await _online(emulator)
    audio, mime = await make_audio(0.5, "wav")
    await send_voice_note(emulator, installed.conversation_id, audio, mime, 90_000)
    await send_voice_note(emulator, installed.conversation_id, audio, mime, None, name="x.wav")
    given = json.loads(agent.open(await _next_msg(agent)))["attachments"][0]
    left_out = json.loads(agent.open(await _next_msg(agent)))["attachments"][0]
    assert given["duration_ms"] == 90_000
    assert "duration_ms" not in left_out
    assert left_out["name"] == "x.wav"
    await agent.close()


async def test_agent_audio_answer_reads_back_decrypted(emulator: EmulatorHandle) -> None:
    """The harness hands a test the agent's spoken answer: bytes, mime, duration."""
    installed, agent = await _online(emulator)
    question, mime = await make_audio(0.5, "ogg")
    await send_voice_note(emulator, installed.conversation_id, question, mime, device_id="2")
    envelope = await _next_msg(agent)
    agent.open(envelope)
    answer, _ = await make_audio(1.0, "ogg")
    duration = await audio_duration_ms(answer)
    spoken = await agent.upload_file(answer, "answer.ogg", "audio/ogg", duration_ms=duration or 0)
    picture = await agent.upload_file(b"\x89PNG not audio", "p.png", "image/png")
    await agent.reply_files(envelope, "Turned on the kitchen light.", [spoken, picture])

    [received] = await wait_received_audio(emulator, installed.conversation_id)
    assert received.data == answer
    assert (received.mime, received.name, received.device_id) == ("audio/ogg", "answer.ogg", "2")
    assert received.text == "Turned on the kitchen light."
    assert received.duration_ms == duration
    assert await received_audio(emulator, installed.conversation_id, device_id="1") == []
    await agent.close()


def _file_url(emulator: EmulatorHandle, conversation_id: str, message_id: str, file_id: str) -> str:
    files = f"{emulator.base_url}/_emulator/conversations/{conversation_id}/files"
    return f"{files}/{message_id}/{file_id}"


async def test_page_endpoint_plays_audio_with_its_type(emulator: EmulatorHandle) -> None:
    """The agent's answer and the person's own note, as the page's <audio> loads them."""
    installed, agent = await _online(emulator)
    question, mime = await make_audio(0.5, "webm")
    sent_id = await send_voice_note(emulator, installed.conversation_id, question, mime)
    envelope = await _next_msg(agent)
    agent.open(envelope)
    answer, _ = await make_audio(1.0, "ogg")
    spoken = await agent.upload_file(answer, "answer.ogg", "audio/ogg; codecs=opus")
    answer_id = await agent.reply_files(envelope, "", [spoken])
    await emulator.wait_inbox(installed.conversation_id, 1)

    url = _file_url(emulator, installed.conversation_id, answer_id, spoken["id"])
    async with emulator.session.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "audio/ogg"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "sandbox" in response.headers["Content-Security-Policy"]
        assert response.headers["Content-Disposition"].startswith("inline;")
        assert await response.read() == answer
    async with emulator.session.get(url, headers={"Range": "bytes=100-199"}) as response:
        assert response.status == 206
        assert response.headers["Content-Range"] == f"bytes 100-199/{len(answer)}"
        assert await response.read() == answer[100:200]
    async with emulator.session.get(url, headers={"Range": f"bytes={len(answer)}-"}) as response:
        assert response.status == 416

    timeline = await emulator.admin("GET", f"/conversations/{installed.conversation_id}/timeline")
    [sent] = [item for item in timeline["items"] if item["message_id"] == sent_id]
    [note] = json.loads(sent["text"])["attachments"]
    url = _file_url(emulator, installed.conversation_id, sent_id, note["id"])
    async with emulator.session.get(url) as response:
        assert response.headers["Content-Type"] == "audio/webm"
        assert await response.read() == question
    await agent.close()


@pytest.mark.parametrize(
    ("mime", "served"),
    [
        ("text/html", "application/octet-stream"),
        ("image/svg+xml", "application/octet-stream"),
        ("audio/ogg\r\nX-Injected: 1", "application/octet-stream"),
        ("audio/<script>", "application/octet-stream"),
        ("AUDIO/MPEG; x=<b>", "audio/mpeg"),
        ("image/png", "image/png"),
    ],
)
async def test_page_endpoint_never_serves_an_agent_file_as_a_page(
    emulator: EmulatorHandle, mime: str, served: str
) -> None:
    """A hostile agent chooses the type: only audio and inline pictures keep theirs."""
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="hi")
    envelope = await _next_msg(agent)
    agent.open(envelope)
    page = b"<html><script>alert(document.cookie)</script></html>"
    file = await agent.upload_file(page, "x.html", mime)
    message_id = await agent.reply_files(envelope, "", [file])
    await emulator.wait_inbox(installed.conversation_id, 1)
    url = _file_url(emulator, installed.conversation_id, message_id, file["id"])
    async with emulator.session.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == served
        assert "X-Injected" not in response.headers
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Content-Security-Policy"] == "default-src 'none'; sandbox"
        if served == "application/octet-stream":
            assert response.headers["Content-Disposition"].startswith("attachment;")
    await agent.close()


async def test_page_endpoint_opens_only_this_conversations_blobs(emulator: EmulatorHandle) -> None:
    """An agent naming another conversation's blob (and its key) reads nothing of it."""
    victim, victim_agent = await _online(emulator)
    secret_audio, mime = await make_audio(0.3, "wav")
    victim_note = await send_voice_note(emulator, victim.conversation_id, secret_audio, mime)
    stolen = json.loads(victim_agent.open(await _next_msg(victim_agent)))["attachments"][0]

    thief, thief_agent = await _online(emulator)
    await emulator.send(thief.conversation_id, text="hi")
    envelope = await _next_msg(thief_agent)
    thief_agent.open(envelope)
    message_id = await thief_agent.reply_files(envelope, "", [stolen])
    [entry] = await emulator.wait_inbox(thief.conversation_id, 1)
    assert entry["files"][0]["error"] == "unknown blob"
    async with emulator.session.get(
        _file_url(emulator, thief.conversation_id, message_id, stolen["id"])
    ) as response:
        assert response.status == 404
    # Nor across conversations by ids: the victim's message is not in the thief's log.
    async with emulator.session.get(
        _file_url(emulator, thief.conversation_id, victim_note, stolen["id"])
    ) as response:
        assert response.status == 404
    await victim_agent.close()
    await thief_agent.close()


class VoiceEchoAgent(EchoAgent):
    """Pacerelle's SDK, unchanged: hears each voice note and answers with it, as
    `send_media` sends audio (mime and duration_ms inside the encryption)."""

    heard: ClassVar[list[Any]] = []

    @staticmethod
    async def _echo(message: Any, client: Any) -> None:
        for note in message.attachments or []:
            VoiceEchoAgent.heard.append(note)
            data = await client.download_attachment(note)
            uploaded = await asyncio.to_thread(
                client.upload_file, name=f"echo-{note.name}", data=data, mime=note.mime
            )
            spoken = dataclasses.replace(uploaded, duration_ms=note.duration_ms)
            await client.reply(message, f"heard {len(data)} bytes", attachments=[spoken])


async def test_pacerelles_sdk_hears_the_voice_note_and_answers_in_audio(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    """The SDK reads the emulator's voice note as an app's (AgentAttachment with the audio
    mime and duration_ms) and its audio answer reads back through the harness."""
    sdk = load_sdk()
    installed = await emulator.install()
    runtime = await runtime_token(emulator, sdk, installed.installation_token)
    VoiceEchoAgent.heard.clear()
    agent = VoiceEchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        await emulator.wait_agent(runtime.agent_id, lambda status: status["connected"])
        audio, mime = await make_audio(1.0, "ogg")
        duration = await audio_duration_ms(audio)
        await send_voice_note(emulator, installed.conversation_id, audio, mime)
        [answer] = await wait_received_audio(emulator, installed.conversation_id)
    finally:
        await stop_echo(emulator, agent, runtime.agent_id)
    [heard] = VoiceEchoAgent.heard
    assert (heard.mime, heard.duration_ms, heard.name) == (mime, duration, "voice-note.ogg")
    assert (answer.data, answer.mime, answer.duration_ms) == (audio, mime, duration)
    assert (answer.name, answer.text) == ("echo-voice-note.ogg", f"heard {len(audio)} bytes")


SMALL_BLOB_LIMIT = 1024 * 1024


async def test_a_voice_note_as_large_as_a_blob_may_be_fits_the_send_body(
    socket_enabled: None,
) -> None:
    """The admin `send` carries files in base64: its body limit leaves room for the largest
    blob, and a file over it is refused as Pacerelle refuses a blob (413, JSON)."""
    config = EmulatorConfig(max_blob_bytes=SMALL_BLOB_LIMIT)
    async with running_emulator(config) as emulator:
        installed = await emulator.install()
        agent = await emulator.agent(installed)
        largest = bytes(SMALL_BLOB_LIMIT - GCM_TAG_BYTES)
        await send_voice_note(emulator, installed.conversation_id, largest, "audio/wav", 1000)
        with pytest.raises(AdminError) as refused:
            await send_voice_note(
                emulator, installed.conversation_id, largest + b"!", "audio/wav", 1000
            )
        assert refused.value.status == 413
        assert refused.value.body == {"error": "the blob is too large"}
        agent.peer.close()
