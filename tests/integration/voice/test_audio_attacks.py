"""Hostile voice notes and hostile decoders (issue 19): what a sender's file cannot make us do.

A playlist, concat list or file reference never reads a local file (a planted note,
checked by its content); a decoder that hangs is killed with everything it started; one
that floods stdout or stderr is cut off; no decoder at all is `no_converter`. The fake
decoders are shell scripts configured as Home Assistant's ffmpeg binary.
"""

import asyncio
import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.limits import (
    MAX_CONCURRENT_CONVERSIONS,
    MAX_FFMPEG_OUTPUT_BYTES,
    MAX_FFMPEG_STDERR_BYTES,
    MAX_VOICE_BYTES,
)
from custom_components.pacerelle.options import CONF_ASSIST_AGENT, CONF_VOICE_PIPELINE
from custom_components.pacerelle.voice import audio as voice_audio
from custom_components.pacerelle.voice.audio import (
    VOICE_BYTES_PER_SECOND,
    VoiceAudioError,
    async_ffmpeg_to_pcm,
    async_voice_to_pcm,
)
from custom_components.pacerelle.voice.formats import VoiceFormat
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.voice import send_voice_note
from tests.helpers.voice_assist import async_voice_assistant
from tests.helpers.voice_audio import (
    FORMATS,
    SECONDS,
    MakeNote,
    assert_is_the_tone,
    make_note_file,
    note_maker,
    official_image_known,  # noqa: F401
    pcm_samples,
    refusal,
    tone_hz,
)

PLANTED_HZ = 1000  # the planted file's tone: recognisable in any output
PROCESS_GONE_WITHIN = 3.0
FAKE_TIMEOUT_SECONDS = 1.0

FAKE_FFMPEG = """#!/bin/sh
# A stand-in for ffmpeg; $FAKE_FFMPEG_MODE chooses how it misbehaves.
dir=$(dirname "$0")
if [ "$1" = "-version" ]; then echo "ffmpeg version 9.0.0"; exit 0; fi
echo "$@" > "$dir/args"
case "$FAKE_FFMPEG_MODE" in
  hang) sleep 60 & echo "$$ $!" > "$dir/tmp.$$"; mv "$dir/tmp.$$" "$dir/pids.$$"; wait ;;
  flood) exec cat /dev/zero ;;
  chatty) head -c 1000000 /dev/zero | tr '\\0' x >&2; head -c 32000 /dev/zero; exit 0 ;;
  old) echo "Unrecognized option 'fd'." >&2; exit 8 ;;
  input)
    fd=$(echo "$@" | sed 's/.* -fd \\([0-9]*\\) .*/\\1/')
    readlink "/proc/$$/fd/$fd" > "$dir/input"; exit 1 ;;
esac
exit 1
"""


@pytest.fixture(scope="session")
def make_note(tmp_path_factory: pytest.TempPathFactory) -> MakeNote:
    return note_maker(tmp_path_factory)


@pytest.fixture
def fake_ffmpeg(tmp_path: Path) -> Path:
    script = tmp_path / "fake" / "ffmpeg"
    script.parent.mkdir()
    script.write_text(FAKE_FFMPEG)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.fixture
def ffmpeg_bin(request: pytest.FixtureRequest, fake_ffmpeg: Path) -> str:
    """The binary Home Assistant's ffmpeg integration is configured with: real by default."""
    choice = getattr(request, "param", "real")
    return {"real": "ffmpeg", "fake": str(fake_ffmpeg), "missing": "/nonexistent/ffmpeg"}[choice]


@pytest.fixture(autouse=True)
async def ffmpeg_set_up(hass: HomeAssistant, ffmpeg_bin: str) -> None:
    assert await async_setup_component(hass, "ffmpeg", {"ffmpeg": {"ffmpeg_bin": ffmpeg_bin}})


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MP3 on the local disk that a hostile note would like us to read."""
    path = tmp_path_factory.getbasetemp() / "planted" / "secret.mp3"
    path.parent.mkdir(exist_ok=True)
    return make_note_file(path, FORMATS["mp3"][1], seconds=2, hz=PLANTED_HZ)


def _playlists(planted: Path) -> dict[str, bytes]:
    return {
        "hls": (
            f"#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXTINF:2.0,\nfile:{planted}\n#EXT-X-ENDLIST\n"
        ).encode(),
        "concat": f"ffconcat version 1.0\nfile 'file:{planted}'\n".encode(),
        "file_url": f"file:{planted}".encode(),
        "image2_pattern": f"{planted.parent}/%d.mp3".encode(),
    }


def _gone(pid: int) -> bool:
    """No such process, or only its zombie waiting for init."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in {"Z", "X"}


def _started(directory: Path) -> list[int]:
    """The hanging fake decoders started so far, and the child each started."""
    return [int(pid) for path in directory.glob("pids.*") for pid in path.read_text().split()]


async def _wait_started(directory: Path, decoders: int) -> list[int]:
    async with asyncio.timeout(PROCESS_GONE_WITHIN):
        while len(_started(directory)) < 2 * decoders:  # noqa: ASYNC110 - other processes
            await asyncio.sleep(0.02)
    return _started(directory)


async def _wait_gone(pids: list[int]) -> None:
    assert pids
    async with asyncio.timeout(PROCESS_GONE_WITHIN):
        while not all(_gone(pid) for pid in pids):  # noqa: ASYNC110 - other processes
            await asyncio.sleep(0.02)


@contextlib.contextmanager
def _kill_left_over(directory: Path) -> Iterator[None]:
    """A failing test must not leave its fake decoders running."""
    try:
        yield
    finally:
        for pid in _started(directory):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


@pytest.mark.parametrize("kind", ["hls", "concat", "file_url", "image2_pattern"])
async def test_a_playlist_disguised_as_audio_is_refused(
    hass: HomeAssistant, planted: Path, kind: str
) -> None:
    assert await refusal(hass, _playlists(planted)[kind], "audio/ogg") == "unsupported_format"


async def test_a_playlist_behind_an_audio_magic_number_reads_no_file(
    hass: HomeAssistant, planted: Path
) -> None:
    """An ID3 tag in front: sniffed as MP3, and the MP3 demuxer (forced) reads no playlist."""
    for playlist in _playlists(planted).values():
        disguised = b"ID3\x04\x00\x00\x00\x00\x00\x00" + playlist
        assert await refusal(hass, disguised, "audio/mpeg") == "unreadable"


HLS = VoiceFormat("hls", "hls", "mp3float,mp3")


def _loosened(
    monkeypatch: pytest.MonkeyPatch,
    *,
    protocols: str | None = None,
    formats: str | None = None,
    codecs: str | None = None,
) -> None:
    """The real ffmpeg command with some of its input whitelists widened."""
    build = voice_audio._ffmpeg_command  # the command under test

    def loosened(*args: Any) -> list[str]:
        command = build(*args)
        for option, value in [
            ("-protocol_whitelist", protocols),
            ("-format_whitelist", formats),
            ("-codec_whitelist", codecs),
        ]:
            if value is not None:
                command[command.index(option) + 1] = value
        return command

    monkeypatch.setattr(voice_audio, "_ffmpeg_command", loosened)


@pytest.mark.parametrize(
    ("protocols", "formats"),
    [(None, None), ("fd,file", None), (None, "hls,mp3")],
    ids=["as_built", "file_allowed", "nested_mp3_allowed"],
)
async def test_even_a_forced_playlist_demuxer_reads_no_local_file(
    hass: HomeAssistant,
    planted: Path,
    monkeypatch: pytest.MonkeyPatch,
    protocols: str | None,
    formats: str | None,
) -> None:
    """Were the sniffing wrong, two locks remain, each enough: only the memfd protocol,
    and only the forced demuxer (no nested one for the playlist's entries)."""
    _loosened(monkeypatch, protocols=protocols, formats=formats)
    with pytest.raises(VoiceAudioError) as caught:
        await async_ffmpeg_to_pcm("ffmpeg", _playlists(planted)["hls"], HLS)
    assert caught.value.reason == "unreadable"


async def test_the_forced_playlist_attack_is_real_without_the_locks(
    hass: HomeAssistant, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the test above: with both widened, ffmpeg reads the planted tone."""
    _loosened(monkeypatch, protocols="fd,file", formats="hls,mp3")
    pcm = await async_ffmpeg_to_pcm("ffmpeg", _playlists(planted)["hls"], HLS)
    assert abs(tone_hz(pcm) - PLANTED_HZ) < PLANTED_HZ * 0.02


async def test_a_wav_with_an_exotic_codec_reaches_no_decoder(
    hass: HomeAssistant, make_note: MakeNote
) -> None:
    """Only the decoders of the codecs phones use may open: not, say, Yamaha ADPCM."""
    assert await refusal(hass, make_note("wav_adpcm_yamaha"), "audio/wav") == "unreadable"


async def test_the_exotic_codec_decodes_with_the_decoder_allowed(
    hass: HomeAssistant, make_note: MakeNote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the test above: the note is sound, only the decoder list refuses it."""
    _loosened(monkeypatch, codecs="adpcm_yamaha")
    pcm = await async_voice_to_pcm(hass, make_note("wav_adpcm_yamaha"), "audio/wav")
    assert len(pcm) > SECONDS * VOICE_BYTES_PER_SECOND // 2
    assert max(pcm_samples(pcm)) > 1000


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_hanging_decoder_is_killed_with_its_children(
    hass: HomeAssistant, make_note: MakeNote, fake_ffmpeg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "hang")
    monkeypatch.setattr(voice_audio, "CONVERT_TIMEOUT_SECONDS", FAKE_TIMEOUT_SECONDS)
    with _kill_left_over(fake_ffmpeg.parent):
        assert await refusal(hass, make_note("ogg_opus"), "audio/ogg") == "timeout"
        await _wait_gone(_started(fake_ffmpeg.parent))


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_cancelled_conversion_leaves_no_decoder_behind(
    hass: HomeAssistant, make_note: MakeNote, fake_ffmpeg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "hang")
    with _kill_left_over(fake_ffmpeg.parent):
        task = asyncio.create_task(async_voice_to_pcm(hass, make_note("ogg_opus"), "audio/ogg"))
        pids = await _wait_started(fake_ffmpeg.parent, 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await _wait_gone(pids)


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_conversion_cancelled_while_its_decoder_starts_leaves_none_behind(
    hass: HomeAssistant, make_note: MakeNote, fake_ffmpeg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller leaves after the process exists but before asyncio hands it over."""
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "hang")
    spawn = asyncio.create_subprocess_exec
    spawned = asyncio.Event()

    async def slow_handover(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await spawn(*args, **kwargs)
        spawned.set()
        await asyncio.sleep(0.2)  # the window in which the caller is cancelled
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_handover)
    with _kill_left_over(fake_ffmpeg.parent):
        task = asyncio.create_task(async_voice_to_pcm(hass, make_note("ogg_opus"), "audio/ogg"))
        await spawned.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await _wait_gone(await _wait_started(fake_ffmpeg.parent, 1))


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_burst_of_notes_runs_two_decoders_at_a_time(
    hass: HomeAssistant, make_note: MakeNote, fake_ffmpeg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "hang")
    note = make_note("ogg_opus")
    with _kill_left_over(fake_ffmpeg.parent):
        tasks = [
            asyncio.create_task(async_voice_to_pcm(hass, note, "audio/ogg"))
            for _ in range(MAX_CONCURRENT_CONVERSIONS + 1)
        ]
        await _wait_started(fake_ffmpeg.parent, MAX_CONCURRENT_CONVERSIONS)
        # The next one would start within milliseconds were it allowed to.
        await asyncio.sleep(0.3)
        assert len(_started(fake_ffmpeg.parent)) == 2 * MAX_CONCURRENT_CONVERSIONS
        tasks[0].cancel()  # a slot frees: the waiting note's decoder starts
        pids = await _wait_started(fake_ffmpeg.parent, MAX_CONCURRENT_CONVERSIONS + 1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await _wait_gone(pids)


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_decoder_flooding_stdout_is_cut_off(
    hass: HomeAssistant, make_note: MakeNote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Endless output stops at the duration cap: too_long, memory bounded."""
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "flood")
    monkeypatch.setattr(voice_audio, "CONVERT_TIMEOUT_SECONDS", FAKE_TIMEOUT_SECONDS)
    assert await refusal(hass, make_note("ogg_opus"), "audio/ogg") == "too_long"
    assert MAX_FFMPEG_OUTPUT_BYTES < 5 * 1024 * 1024


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_a_chatty_decoder_is_drained_and_logged_bounded(
    hass: HomeAssistant,
    make_note: MakeNote,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """1 MB on stderr (more than a pipe holds) does not stall it; the log keeps 4 KiB."""
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "chatty")
    monkeypatch.setattr(voice_audio, "CONVERT_TIMEOUT_SECONDS", FAKE_TIMEOUT_SECONDS * 3)
    caplog.set_level("DEBUG", logger=voice_audio.__name__)
    pcm = await async_voice_to_pcm(hass, make_note("ogg_opus"), "audio/ogg")
    assert len(pcm) == 32000
    [record] = [r for r in caplog.records if "ffmpeg on a ogg voice note" in r.getMessage()]
    assert record.levelname == "DEBUG"
    assert record.getMessage().count("x") == MAX_FFMPEG_STDERR_BYTES


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_the_note_reaches_the_decoder_from_memory_with_its_format_forced(
    hass: HomeAssistant, make_note: MakeNote, fake_ffmpeg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "input")
    assert await refusal(hass, make_note("m4a_aac"), "audio/mp4") == "unreadable"
    assert (fake_ffmpeg.parent / "input").read_text().startswith("/memfd:pacerelle-voice")
    args = (fake_ffmpeg.parent / "args").read_text().split()
    for option, value in [
        ("-protocol_whitelist", "fd"),
        ("-format_whitelist", "mov"),
        ("-f", "mov"),
        ("-i", "fd:"),
        ("-t", "121"),
    ]:
        assert args[args.index(option) + 1] == value


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_an_oversized_note_is_refused_before_any_decoder_runs(
    hass: HomeAssistant, fake_ffmpeg: Path
) -> None:
    data = b"OggS" + bytes(MAX_VOICE_BYTES)
    assert await refusal(hass, data, "audio/ogg") == "too_large"
    assert not (fake_ffmpeg.parent / "args").exists()


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_an_ffmpeg_without_the_fd_protocol_is_no_converter(
    hass: HomeAssistant, make_note: MakeNote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ffmpeg older than 6.0 cannot convert any note: said so, not "unreadable"."""
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "old")
    assert await refusal(hass, make_note("ogg_opus"), "audio/ogg") == "no_converter"


@pytest.mark.parametrize("ffmpeg_bin", ["missing"], indirect=True)
async def test_without_ffmpeg_only_16k_wav_is_converted(
    hass: HomeAssistant, make_note: MakeNote
) -> None:
    assert await refusal(hass, make_note("ogg_opus"), "audio/ogg") == "no_converter"
    assert_is_the_tone(await async_voice_to_pcm(hass, make_note("wav_16k_mono"), "audio/wav"))


@pytest.mark.parametrize("ffmpeg_bin", ["fake"], indirect=True)
async def test_home_assistant_stopping_mid_conversion_leaves_no_decoder(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    make_note: MakeNote,
    fake_ffmpeg: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the emulator: a note's decoder hangs; Home Assistant stops; it is killed."""
    monkeypatch.setenv("FAKE_FFMPEG_MODE", "hang")
    voice = await async_voice_assistant(hass)
    options = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT, CONF_VOICE_PIPELINE: voice.pipeline.id}
    installed = (await start_agent(hass, emulator, options=options)).installed
    with _kill_left_over(fake_ffmpeg.parent):
        await send_voice_note(
            emulator, installed.conversation_id, make_note("ogg_opus"), "audio/ogg", 3000
        )
        pids = await _wait_started(fake_ffmpeg.parent, 1)
        hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
        await _wait_gone(pids)
    assert voice.stt.calls == []
