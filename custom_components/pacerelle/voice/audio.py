"""Voice notes to what Assist hears: 16 kHz, mono, signed 16-bit little-endian PCM.

A voice note is a stranger's file until proven otherwise. Decisions:

- Formats: what Pacerelle's apps and phones send, Ogg (Opus, Vorbis), WebM/Matroska
  (Opus), MP4/M4A (AAC), ADTS AAC, MP3, WAV (PCM and the usual telephone codecs) and
  FLAC. The format is decided from the bytes (magic numbers), never from the sender's
  mime: when the two disagree the bytes win and the disagreement is logged (debug).
  Anything else is `unsupported_format`, before any decoder sees it.
- A WAV that already is 16 kHz mono 16-bit PCM is unpacked in Python (`wave`, in the
  executor): no ffmpeg needed.
- Everything else goes through Home Assistant's own ffmpeg (the `ffmpeg` integration's
  configured binary, from its public get_ffmpeg_manager; `ffmpeg` is one of the manifest's
  dependencies, as it is tts's, so it is set up before this integration), in a subprocess,
  so hostile media is decoded outside Home Assistant's process. The command is locked down:
  the demuxer is forced (`-f`) from the sniffed format and is the only one allowed
  (`-format_whitelist`), so a playlist, concat list or image pattern is never interpreted;
  only the decoders of the accepted codecs may open (`-codec_whitelist`); the only protocol
  is `fd` (`-protocol_whitelist`), so no file and no network; the note is read from an
  anonymous in-memory file (memfd, seekable, which MP4 needs), never written to disk;
  decoding stops at MAX_VOICE_SECONDS + 1 s (`-t`) and stdout is read up to that many bytes;
  the process runs in its own session and is killed with its whole group, and reaped, after
  CONVERT_TIMEOUT_SECONDS or when the caller gives up; stderr is bounded and logged at debug
  only. At most MAX_CONCURRENT_CONVERSIONS run at once; others wait their turn.
- Bounds: MAX_VOICE_BYTES of input (`too_large`, before any work), MAX_VOICE_SECONDS of
  audio (`too_long`; 2 minutes is a long spoken command and 3.75 MiB of PCM), with
  VOICE_LENGTH_SLACK_SECONDS for codec padding.
- A note that decodes only in part (cut short) gives what decodes; one that gives no
  audio at all, or makes ffmpeg fail, is `unreadable`. No ffmpeg binary (or no memfd,
  outside Linux, or an ffmpeg older than 6.0, which has no `fd` protocol) is
  `no_converter`: 16 kHz WAV still works.
"""

import asyncio
import contextlib
import io
import logging
import os
import signal
import wave
from typing import Final

from homeassistant.components.ffmpeg import get_ffmpeg_manager
from homeassistant.core import HomeAssistant
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN
from ..limits import (
    CONVERT_TIMEOUT_SECONDS,
    FFMPEG_DURATION_CAP_SECONDS,
    MAX_CONCURRENT_CONVERSIONS,
    MAX_FFMPEG_OUTPUT_BYTES,
    MAX_FFMPEG_STDERR_BYTES,
    MAX_LOGGED_MIME_CHARS,
    MAX_VOICE_BYTES,
    MAX_VOICE_PCM_BYTES,
)
from .formats import (
    VOICE_BYTES_PER_SECOND,
    VOICE_CHANNELS,
    VOICE_SAMPLE_RATE,
    VOICE_SAMPLE_WIDTH,
    WAV,
    VoiceFormat,
    announced_format,
    sniff_voice_format,
)

_LOGGER = logging.getLogger(__name__)

FFMPEG_READ_CHUNK: Final = 64 * 1024
# The only protocol ffmpeg may open: the memfd. No file:, no network, no nesting.
FFMPEG_INPUT_PROTOCOLS: Final = "fd"
# What an ffmpeg older than 6.0 (no `fd` protocol) says: it cannot convert any note.
FFMPEG_WITHOUT_FD_MARKERS: Final = (b"Unrecognized option 'fd'", b"Protocol not found")

_CONVERSION_SLOTS: HassKey[asyncio.Semaphore] = HassKey(f"{DOMAIN}_voice_conversions")

UNSUPPORTED_FORMAT: Final = "unsupported_format"
TOO_LONG: Final = "too_long"
TOO_LARGE: Final = "too_large"
UNREADABLE: Final = "unreadable"
NO_CONVERTER: Final = "no_converter"
TIMEOUT: Final = "timeout"
VOICE_ERROR_REASONS: Final = frozenset(
    {UNSUPPORTED_FORMAT, TOO_LONG, TOO_LARGE, UNREADABLE, NO_CONVERTER, TIMEOUT}
)


class VoiceAudioError(Exception):
    """A voice note that cannot become PCM; `reason` is one of VOICE_ERROR_REASONS."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


async def async_voice_to_pcm(hass: HomeAssistant, data: bytes, mime: str) -> bytes:
    """The voice note as 16 kHz mono s16le PCM (no header); VoiceAudioError if it cannot be."""
    if len(data) > MAX_VOICE_BYTES:
        raise VoiceAudioError(TOO_LARGE, f"{len(data)} bytes")
    voice_format = sniff_voice_format(data)
    shown_mime = mime[:MAX_LOGGED_MIME_CHARS]  # the sender's text: short, and quoted
    if voice_format is None:
        raise VoiceAudioError(UNSUPPORTED_FORMAT, f"unknown bytes, mime {shown_mime!r}")
    if announced_format(mime) is not voice_format:
        _LOGGER.debug(
            "Voice note sent as %r is %s: going by its bytes", shown_mime, voice_format.name
        )
    if voice_format is WAV:
        pcm = await hass.async_add_executor_job(_pcm_from_voice_wav, data)
        if pcm is not None:
            return _checked_length(pcm)
    binary = _ffmpeg_binary(hass)
    slots = hass.data.setdefault(_CONVERSION_SLOTS, asyncio.Semaphore(MAX_CONCURRENT_CONVERSIONS))
    async with slots:
        pcm = await async_ffmpeg_to_pcm(binary, data, voice_format)
    return _checked_length(pcm)


def _checked_length(pcm: bytes) -> bytes:
    if len(pcm) > MAX_VOICE_PCM_BYTES:
        raise VoiceAudioError(TOO_LONG, f"{len(pcm) / VOICE_BYTES_PER_SECOND:.1f} s")
    pcm = pcm[: len(pcm) - len(pcm) % VOICE_SAMPLE_WIDTH]
    if not pcm:
        raise VoiceAudioError(UNREADABLE, "no audio")
    return pcm


def _pcm_from_voice_wav(data: bytes) -> bytes | None:
    """The samples of a WAV that already is 16 kHz mono 16-bit PCM; None for other WAVs.

    Runs in the executor. Reads at most one sample past the limit, so that a header
    announcing hours of audio costs nothing.
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as note:
            if (
                note.getframerate() != VOICE_SAMPLE_RATE
                or note.getnchannels() != VOICE_CHANNELS
                or note.getsampwidth() != VOICE_SAMPLE_WIDTH
                or note.getcomptype() != "NONE"
            ):
                return None
            return note.readframes(MAX_VOICE_PCM_BYTES // VOICE_SAMPLE_WIDTH + 1)
    except (wave.Error, EOFError):
        return None  # not a plain PCM WAV: ffmpeg decides


def _ffmpeg_binary(hass: HomeAssistant) -> str:
    """The ffmpeg the user configured for Home Assistant (a manifest dependency)."""
    try:
        return get_ffmpeg_manager(hass).binary
    except ValueError as err:  # only where this integration was not set up by Home Assistant
        raise VoiceAudioError(NO_CONVERTER, "the ffmpeg integration is not set up") from err


def _ffmpeg_command(binary: str, voice_format: VoiceFormat, fd: int) -> list[str]:
    return [
        binary,
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-threads",
        "1",
        # Input: one forced demuxer, its decoders, the memfd and nothing else.
        "-protocol_whitelist",
        FFMPEG_INPUT_PROTOCOLS,
        "-format_whitelist",
        voice_format.demuxer,
        "-codec_whitelist",
        voice_format.decoders,
        "-f",
        voice_format.demuxer,
        "-fd",
        str(fd),
        "-i",
        "fd:",
        # Output: the first audio stream only, capped in time, raw PCM on stdout.
        "-map",
        "0:a:0",
        "-vn",
        "-sn",
        "-dn",
        "-t",
        str(FFMPEG_DURATION_CAP_SECONDS),
        "-ac",
        str(VOICE_CHANNELS),
        "-ar",
        str(VOICE_SAMPLE_RATE),
        "-c:a",
        "pcm_s16le",
        "-f",
        "s16le",
        "pipe:1",
    ]


def _memfd_holding(data: bytes) -> int:
    """An anonymous in-memory file with the note, rewound (executor: copies megabytes)."""
    fd = os.memfd_create("pacerelle-voice", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


async def async_ffmpeg_to_pcm(binary: str, data: bytes, voice_format: VoiceFormat) -> bytes:
    """The note decoded by `binary` (an ffmpeg) as 16 kHz mono s16le PCM, locked down."""
    if not hasattr(os, "memfd_create"):
        raise VoiceAudioError(NO_CONVERTER, "no memfd_create on this system")
    # Shielded: cancelled while the process starts, it is killed once started, not leaked.
    spawning = asyncio.ensure_future(_async_spawn(binary, data, voice_format))
    try:
        process = await asyncio.shield(spawning)
    except asyncio.CancelledError:
        spawning.add_done_callback(_kill_once_spawned)
        raise
    if process.stdin is not None:
        process.stdin.close()
    stderr_task = asyncio.create_task(_read_capped(process.stderr, MAX_FFMPEG_STDERR_BYTES))
    try:
        async with asyncio.timeout(CONVERT_TIMEOUT_SECONDS):
            pcm = await _read_capped(process.stdout, MAX_FFMPEG_OUTPUT_BYTES + 1, drain=False)
            if len(pcm) > MAX_FFMPEG_OUTPUT_BYTES:
                raise VoiceAudioError(TOO_LONG, "more audio than ffmpeg was asked for")
            returncode = await process.wait()
            stderr = await stderr_task
    except TimeoutError as err:
        raise VoiceAudioError(TIMEOUT, f"ffmpeg ran over {CONVERT_TIMEOUT_SECONDS} s") from err
    finally:
        stderr_task.cancel()
        await _async_kill_and_reap(process)
    if stderr:
        _LOGGER.debug(
            "ffmpeg on a %s voice note: %s", voice_format.name, stderr.decode(errors="replace")
        )
    if returncode != 0:
        if any(marker in stderr for marker in FFMPEG_WITHOUT_FD_MARKERS):
            raise VoiceAudioError(NO_CONVERTER, "this ffmpeg cannot read from a descriptor")
        raise VoiceAudioError(UNREADABLE, f"ffmpeg exited with {returncode}")
    return pcm


async def _async_spawn(
    binary: str, data: bytes, voice_format: VoiceFormat
) -> asyncio.subprocess.Process:
    """ffmpeg started on a memfd holding the note (closed here once ffmpeg has its copy)."""
    fd = await asyncio.get_running_loop().run_in_executor(None, _memfd_holding, data)
    try:
        return await asyncio.create_subprocess_exec(
            *_ffmpeg_command(binary, voice_format, fd),
            # A pipe closed at once, not /dev/null: opening that would block the loop.
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(fd,),
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError) as err:
        raise VoiceAudioError(NO_CONVERTER, f"{binary}: {err}") from err
    finally:
        os.close(fd)


def _kill_once_spawned(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Kill a decoder whose caller left while it started (asyncio's watcher reaps it)."""
    if spawning.cancelled() or spawning.exception() is not None:
        return
    _kill_group(spawning.result())


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL to ffmpeg's own session (ffmpeg and anything it started), and to ffmpeg."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()  # should its session have failed to start


async def _read_capped(
    stream: asyncio.StreamReader | None, limit: int, *, drain: bool = True
) -> bytes:
    """Up to `limit` bytes of the stream; with `drain`, read on (discarding) to its end.

    Draining keeps a chatty process from blocking on a full pipe.
    """
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(FFMPEG_READ_CHUNK):
        kept += chunk[: max(0, limit - len(kept))]
        if len(kept) >= limit and not drain:
            break
    return bytes(kept)


async def _async_kill_and_reap(process: asyncio.subprocess.Process) -> None:
    """Kill ffmpeg and anything it started (its own session), then wait for it."""
    if process.returncode is None:
        _kill_group(process)
    # Shielded: a caller cancelled twice must not leave a zombie behind.
    await asyncio.shield(process.wait())
