"""The voice note formats we accept, told apart by their bytes (magic numbers).

Each format names the ffmpeg demuxer forced for it and the only decoders it may open:
the codecs Pacerelle's apps and phones record. The sender's mime only serves to log a
disagreement with the bytes (voice/audio.py).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

VOICE_SAMPLE_RATE: Final = 16000  # Hz; mono, signed 16-bit little-endian PCM
VOICE_SAMPLE_WIDTH: Final = 2  # bytes
VOICE_CHANNELS: Final = 1
VOICE_BYTES_PER_SECOND: Final = VOICE_SAMPLE_RATE * VOICE_SAMPLE_WIDTH * VOICE_CHANNELS


@dataclass(frozen=True, slots=True)
class VoiceFormat:
    """A container we accept: its ffmpeg demuxer and the decoders it may use."""

    name: str
    demuxer: str
    decoders: str


# Each decoder is code that parses a stranger's bytes: only those of the codecs recorded by
# phones and apps (and the telephone's A-law and mu-law in WAV).
_PCM_DECODERS: Final = "pcm_s16le,pcm_s24le,pcm_s32le,pcm_f32le,pcm_f64le,pcm_u8,pcm_alaw,pcm_mulaw"
OGG: Final = VoiceFormat("ogg", "ogg", "opus,libopus,vorbis,libvorbis,flac")
WEBM: Final = VoiceFormat("webm", "matroska", "opus,libopus,vorbis,libvorbis,aac")
MP4: Final = VoiceFormat("mp4", "mov", "aac,aac_fixed,mp3float,mp3,alac,opus,libopus")
ADTS: Final = VoiceFormat("aac", "aac", "aac,aac_fixed")
MP3: Final = VoiceFormat("mp3", "mp3", "mp3float,mp3")
WAV: Final = VoiceFormat("wav", "wav", _PCM_DECODERS)
FLAC: Final = VoiceFormat("flac", "flac", "flac")

# What each sender mime announces, to log a disagreement with the bytes.
_MIME_FORMATS: Final[Mapping[str, VoiceFormat]] = {
    "audio/ogg": OGG,
    "audio/opus": OGG,
    "application/ogg": OGG,
    "audio/webm": WEBM,
    "video/webm": WEBM,
    "audio/mp4": MP4,
    "audio/m4a": MP4,
    "audio/x-m4a": MP4,
    "video/mp4": MP4,
    "audio/aac": ADTS,
    "audio/aacp": ADTS,
    "audio/mpeg": MP3,
    "audio/mp3": MP3,
    "audio/wav": WAV,
    "audio/x-wav": WAV,
    "audio/wave": WAV,
    "audio/vnd.wave": WAV,
    "audio/flac": FLAC,
    "audio/x-flac": FLAC,
}


# (offset, magic bytes, format): the signatures of the containers we accept.
_MAGIC_NUMBERS: Final = (
    (0, b"OggS", OGG),
    (0, b"\x1a\x45\xdf\xa3", WEBM),  # EBML: Matroska and WebM
    (4, b"ftyp", MP4),
    (8, b"WAVE", WAV),  # after b"RIFF" and the size, checked below
    (0, b"fLaC", FLAC),
    (0, b"ID3", MP3),  # an ID3v2 tag in front of MPEG audio frames
)


def announced_format(mime: str) -> VoiceFormat | None:
    """The format a sender's mime announces (parameters and case ignored); None if unknown."""
    return _MIME_FORMATS.get(mime.split(";", 1)[0].strip().lower())


def sniff_voice_format(data: bytes) -> VoiceFormat | None:
    """The container the bytes are, from their magic numbers; None for anything else."""
    for offset, magic, voice_format in _MAGIC_NUMBERS:
        if data[offset : offset + len(magic)] == magic:
            if voice_format is WAV and not data.startswith(b"RIFF"):
                continue
            return voice_format
    # A bare MPEG audio frame: 11 sync bits; layer bits 00 are ADTS AAC, others MP3.
    if len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0:
        return ADTS if (data[1] >> 1) & 0x03 == 0 else MP3
    return None
