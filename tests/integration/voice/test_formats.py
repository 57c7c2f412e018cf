"""A voice note's container is told by its bytes, never by the sender's mime: each format
we accept by its magic number, anything else none; a mime only announces, with parameters
and case ignored."""

import pytest

from custom_components.pacerelle.voice.formats import (
    FLAC,
    MP3,
    MP4,
    OGG,
    WAV,
    WEBM,
    VoiceFormat,
    announced_format,
    sniff_voice_format,
)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"OggS\x00\x02", OGG),
        (b"\x1a\x45\xdf\xa3\x01", WEBM),
        (b"\x00\x00\x00\x20ftypM4A ", MP4),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", WAV),
        (b"fLaC\x00", FLAC),
        (b"ID3\x04\x00", MP3),
    ],
)
def test_each_container_is_told_by_its_bytes(head: bytes, expected: VoiceFormat) -> None:
    assert sniff_voice_format(head + bytes(64)) is expected


@pytest.mark.parametrize(
    "data",
    [b"", b"<html>" + bytes(64), b"RIFX\x24\x00\x00\x00WAVE" + bytes(64), b"%PDF-1.7"],
)
def test_anything_else_is_no_voice_format(data: bytes) -> None:
    assert sniff_voice_format(data) is None


def test_a_mime_only_announces() -> None:
    assert announced_format("Audio/OGG; codecs=opus") is OGG
    assert announced_format("audio/x-m4a") is MP4
    assert announced_format("application/pdf") is None


def test_a_bare_mpeg_frame_is_aac_or_mp3_by_its_layer_bits() -> None:
    from custom_components.pacerelle.voice.formats import ADTS

    assert sniff_voice_format(b"\xff\xf1\x50\x80") is ADTS  # layer 00
    assert sniff_voice_format(b"\xff\xfb\x90\x64") is MP3  # MPEG-1 layer III
    assert sniff_voice_format(b"\xff\x1b") is None  # no sync
