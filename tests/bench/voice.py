"""scripts/bench-voice: how long a voice note takes to become 16 kHz PCM.

Wall time (median of a few rounds) of voice_audio's conversion of a 30 s note in each
format a phone sends, through the same locked-down ffmpeg subprocess (or, for 16 kHz
WAV, the same Python path) Home Assistant uses, and the CPU time ffmpeg itself took
(user + system, from the reaped child's usage): the wall time grows with other load on
the machine, the CPU time hardly.
"""

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path

from custom_components.pacerelle.voice.audio import (
    VOICE_BYTES_PER_SECOND,
    _pcm_from_voice_wav,
    async_ffmpeg_to_pcm,
)
from custom_components.pacerelle.voice.formats import MP4, OGG, WAV, WEBM, VoiceFormat
from tests.helpers.voice_audio import FORMATS, make_note_file

NOTE_SECONDS = 30
CASES: tuple[tuple[str, VoiceFormat | None], ...] = (
    ("ogg_opus", OGG),
    ("webm_opus", WEBM),
    ("m4a_aac", MP4),
    ("wav_44k_stereo", WAV),
    ("wav_16k_mono", None),  # the Python path
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _one(data: bytes, voice_format: VoiceFormat | None) -> tuple[float, float, int]:
    cpu = _children_cpu()
    started = time.perf_counter()
    if voice_format is None:
        pcm = await asyncio.get_running_loop().run_in_executor(None, _pcm_from_voice_wav, data)
        assert pcm is not None
    else:
        pcm = await async_ffmpeg_to_pcm("ffmpeg", data, voice_format)
    return time.perf_counter() - started, _children_cpu() - cpu, len(pcm)


async def _run(rounds: int) -> list[str]:
    lines = [f"voice notes of {NOTE_SECONDS} s to 16 kHz mono PCM (median of {rounds}):"]
    with tempfile.TemporaryDirectory() as directory:
        for name, voice_format in CASES:
            path = make_note_file(Path(directory) / name, FORMATS[name][1], seconds=NOTE_SECONDS)
            data = path.read_bytes()
            times, cpu_times = [], []
            for _ in range(rounds):
                elapsed, cpu, pcm_bytes = await _one(data, voice_format)
                times.append(elapsed)
                cpu_times.append(cpu)
            seconds_out = pcm_bytes / VOICE_BYTES_PER_SECOND
            lines.append(
                f"  {name:15} {len(data) / 1024:8.0f} KiB -> {seconds_out:5.1f} s of PCM"
                f" in {statistics.median(times) * 1000:7.1f} ms"
                f" (ffmpeg CPU {statistics.median(cpu_times) * 1000:6.1f} ms)"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-voice", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    for line in asyncio.run(_run(parser.parse_args().rounds)):
        print(line, flush=True)


if __name__ == "__main__":
    main()
