"""Voice notes on the emulated human devices: made with ffmpeg, sent, and read back.

A voice note is what Pacerelle's apps send for one (the SDK's `send_media`): a
`chat.message` whose attachment has an `audio/...` mime and `duration_ms`, encrypted like
any file. Tests use:

- `make_audio(seconds, fmt)`: a tone encoded by ffmpeg as a phone would send it (`ogg`
  Opus, `m4a` AAC, `wav`, `webm` Opus, `mp3`), and its mime;
- `audio_duration_ms(data)`: the duration ffprobe reads, in milliseconds;
- `send_voice_note(emulator, conversation_id, data, mime, duration_ms)`: the person's
  device sends it (duration measured with ffprobe unless given; None leaves it out);
- `received_audio(...)` / `wait_received_audio(...)`: the audio attachments of the agent's
  messages, decrypted on the person's device (bytes, mime, name, duration_ms).

ffmpeg and ffprobe run in a worker thread, never on the event loop.
"""

import asyncio
import base64
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Final

from tests.helpers.emulator import EmulatorHandle

# (mime, ffmpeg output options) of the formats phones send voice notes in.
AUDIO_FORMATS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "ogg": ("audio/ogg", ("-c:a", "libopus", "-f", "ogg")),
    "m4a": ("audio/mp4", ("-c:a", "aac", "-f", "ipod")),
    "wav": ("audio/wav", ("-f", "wav")),
    "webm": ("audio/webm", ("-c:a", "libopus", "-f", "webm")),
    "mp3": ("audio/mpeg", ("-c:a", "libmp3lame", "-f", "mp3")),
}
# A tone takes ffmpeg ~0.1 s; the bound only stops a hung ffmpeg. A start can take over
# 20 s while another test writes and archives 64 MiB (a saturated disk).
FFMPEG_TIMEOUT_SECONDS: Final = 60.0
TONE_HZ: Final = 440


class _Measure(Enum):
    MEASURE = "measure"


MEASURE: Final = _Measure.MEASURE
"""`duration_ms` default of `send_voice_note`: ffprobe measures it, as an app would."""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is needed for voice notes in tests (scripts/setup installs it)")
    return found


def _make_audio_sync(seconds: float, fmt: str) -> bytes:
    _, options = AUDIO_FORMATS[fmt]
    with tempfile.TemporaryDirectory(prefix="pacerelle-voice-") as folder:
        # A file, not a pipe: MP4 needs a seekable output.
        target = Path(folder) / f"note.{fmt}"
        source = f"sine=frequency={TONE_HZ}:sample_rate=48000:duration={seconds}"
        subprocess.run(
            [
                *(_tool("ffmpeg"), "-hide_banner", "-loglevel", "error", "-nostdin"),
                *("-f", "lavfi", "-i", source, "-ac", "1", *options, str(target)),
            ],
            check=True,
            timeout=FFMPEG_TIMEOUT_SECONDS,
        )
        return target.read_bytes()


def _duration_ms_sync(data: bytes) -> int | None:
    with tempfile.TemporaryDirectory(prefix="pacerelle-voice-") as folder:
        # A file, not a pipe: Ogg's duration is read from its last page.
        source = Path(folder) / "note"
        source.write_bytes(data)
        probe = subprocess.run(
            [
                *(_tool("ffprobe"), "-v", "error", "-show_entries", "format=duration"),
                *("-of", "default=noprint_wrappers=1:nokey=1", str(source)),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=FFMPEG_TIMEOUT_SECONDS,
        )
    try:
        return round(float(probe.stdout.strip()) * 1000)
    except ValueError:
        return None  # not audio ffprobe knows, or no duration in it


async def make_audio(seconds: float = 1.0, fmt: str = "ogg") -> tuple[bytes, str]:
    """`seconds` of a tone in the format `fmt` (a key of AUDIO_FORMATS), and its mime."""
    data = await asyncio.to_thread(_make_audio_sync, seconds, fmt)
    return data, AUDIO_FORMATS[fmt][0]


async def audio_duration_ms(data: bytes) -> int | None:
    """The duration ffprobe reads in `data`, or None when it reads none."""
    return await asyncio.to_thread(_duration_ms_sync, data)


async def send_voice_note(
    emulator: EmulatorHandle,
    conversation_id: str,
    data: bytes,
    mime: str,
    duration_ms: int | None | _Measure = MEASURE,
    *,
    name: str | None = None,
    text: str = "",
    **body: Any,
) -> str:
    """The person's device sends `data` as a voice note; returns the message id.

    `body` adds fields of the admin `send` call (`device_id`, `encrypted`, `history`...).
    """
    if duration_ms is MEASURE:
        duration_ms = await audio_duration_ms(data)
    extension = mime.partition("/")[2].partition(";")[0] or "audio"
    attachment: dict[str, Any] = {
        "name": name or f"voice-note.{extension}",
        "mime": mime,
        "data_b64": base64.b64encode(data).decode(),
    }
    if duration_ms is not None:
        attachment["duration_ms"] = duration_ms
    return await emulator.send(conversation_id, text=text, attachments=[attachment], **body)


@dataclass(frozen=True)
class ReceivedAudio:
    """An audio attachment of an agent's message, as the person's device opened it."""

    message_id: str
    device_id: str
    text: str
    name: str
    mime: str
    data: bytes
    duration_ms: int | None


def _audio_of(entry: dict[str, Any]) -> list[ReceivedAudio]:
    if entry.get("kind") != "chat.message":
        return []
    payload = entry.get("payload") or {}
    found = []
    for file in entry.get("files") or []:
        mime = str(file.get("mime") or "")
        if not mime.startswith("audio/"):
            continue
        if "content_b64" not in file:
            raise AssertionError(f"audio attachment {file.get('name')!r}: {file.get('error')}")
        duration = file.get("duration_ms")
        found.append(
            ReceivedAudio(
                message_id=entry["message_id"],
                device_id=entry["device_id"],
                text=str(payload.get("text") or ""),
                name=str(file.get("name")),
                mime=mime,
                data=base64.b64decode(file["content_b64"]),
                duration_ms=duration if type(duration) is int else None,
            )
        )
    return found


async def received_audio(
    emulator: EmulatorHandle, conversation_id: str, device_id: str | None = None
) -> list[ReceivedAudio]:
    """Every audio attachment the person's devices (or `device_id`) got from the agent."""
    entries = await emulator.inbox(conversation_id)
    return [
        audio
        for entry in entries
        if device_id is None or entry["device_id"] == device_id
        for audio in _audio_of(entry)
    ]


async def wait_received_audio(
    emulator: EmulatorHandle,
    conversation_id: str,
    count: int = 1,
    *,
    device_id: str | None = None,
    within: float = 10.0,
) -> list[ReceivedAudio]:
    """The audio attachments received, once there are at least `count`."""
    async with asyncio.timeout(within):
        while True:
            found = await received_audio(emulator, conversation_id, device_id)
            if len(found) >= count:
                return found
            await asyncio.sleep(0.02)
