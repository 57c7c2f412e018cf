"""Voice notes in the emulator (issue 19): sent by a person's device, answered by an agent.

The emulator is a real server over TCP, the agent the reference agent (native libsignal),
the audio real Opus/AAC made by ffmpeg.
"""

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.emulator.reference_agent import ReferenceAgent
from tests.emulator.state import Json
from tests.emulator_fixtures import EmulatorHandle, Installed
from tests.voice_harness import (
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
