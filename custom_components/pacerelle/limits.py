"""Every bound of the Home Assistant side, in one place (as libsignal's consts.rs).

One name per bound, each with its reason. What the protocol bounds (texts, files, queues,
history, names) is the client's and comes from `client` (client/limits.py); these are the
bounds of Home Assistant's own work: voice notes, files on disk, action and LLM tool
arguments, Assist, the setup flow.
"""

from typing import Final

from .voice.formats import VOICE_BYTES_PER_SECOND

# Voice notes (voice/): a stranger's file decoded by ffmpeg, then heard by Assist.

MAX_VOICE_SECONDS: Final = 120
"""Audio of one note: 2 minutes is a long spoken command (3.75 MiB of PCM)."""

MAX_VOICE_BYTES: Final = 10 * 1024 * 1024
"""One note as sent, refused before any work (`too_large`)."""

VOICE_LENGTH_SLACK_SECONDS: Final = 0.5
"""Encoders pad (AAC priming, Opus pre-skip, resampler delay): a note of exactly
MAX_VOICE_SECONDS may decode a little longer."""

MAX_VOICE_PCM_BYTES: Final = int(
    (MAX_VOICE_SECONDS + VOICE_LENGTH_SLACK_SECONDS) * VOICE_BYTES_PER_SECOND
)
"""Decoded PCM of one note, slack included; beyond it the note is `too_long`."""

FFMPEG_DURATION_CAP_SECONDS: Final = MAX_VOICE_SECONDS + 1
"""ffmpeg decodes one second past the limit (`-t`), so that an over-long note is seen as such."""

MAX_FFMPEG_OUTPUT_BYTES: Final = FFMPEG_DURATION_CAP_SECONDS * VOICE_BYTES_PER_SECOND
"""ffmpeg's stdout read for one note: what FFMPEG_DURATION_CAP_SECONDS of PCM takes."""

MAX_FFMPEG_STDERR_BYTES: Final = 4096
"""ffmpeg's stderr kept for the debug log."""

CONVERT_TIMEOUT_SECONDS: Final = 30.0
"""One ffmpeg run: a 2-minute Opus note decodes in about a second; 30 s is for a slow
board, not a loop (the wait for a slot is not part of it)."""

MAX_CONCURRENT_CONVERSIONS: Final = 2
"""ffmpeg processes at once: a burst of notes from many people queues rather than taking
every core of a small board."""

MAX_LOGGED_MIME_CHARS: Final = 64
"""The sender's mime as logged: the sender's text, short, and quoted."""

VOICE_PIPELINE_TIMEOUT: Final = 60.0
"""Speech-to-text of a 2-minute note by a cloud or a slow local engine; later, the note's
event (and every later message's) has waited long enough."""

MAX_VOICE_OUTCOMES: Final = 64
"""Outcomes of notes kept for the Assist bridge, which takes each at once; these are for
notes it never takes (bridge off)."""

SPOKEN_ANSWER_TIMEOUT: Final = 30.0
"""Text to speech of an answer: a sentence or two from a local or cloud engine."""

MAX_SPOKEN_ANSWER_BYTES: Final = 5 * 1024 * 1024
"""The spoken answer's audio: about 5 minutes at 128 kbit/s, an answer, not an audiobook."""

# Assist (assist/bridge.py).

MAX_SPOKEN_ANSWER_CHARS: Final = 4000
"""An answer spoken only up to this: about 5 minutes of speech (MAX_SPOKEN_ANSWER_BYTES),
and with the audio attached the text travels JSON-escaped (up to 12 characters for one),
which must still fit one message."""

MAX_REQUEST_AGE: Final = 300.0
"""Seconds after which a request is not run by Assist: "open the garage" from an hour ago
is not a command."""

ASSIST_ANSWER_TIMEOUT: Final = 120.0
"""Seconds Assist may take to answer one request: a stuck agent must not hold the owner's
later messages forever (answers come in order)."""

# Actions and LLM tools (their schemas).

MAX_ASK_TIMEOUT: Final = 24 * 3600
"""Seconds the `ask` action may wait for an answer: a day (services.yaml says the same)."""

MAX_WAIT_TIMEOUT_MS: Final = 30_000
"""How long the LLM's wait tool may wait: under the time a model's tool call is given."""

MAX_WAIT_REQUESTS: Final = 50
"""Requests the wait tool returns at once (the MCP server's range)."""

# Files on disk (files/, store/).

MAX_FILE_NAME_BYTES: Final = 200
"""A saved attachment's name: below NAME_MAX (255 bytes on Linux file systems), leaving
room for " (999)" when a name is taken."""

MAX_SAME_NAME: Final = 999
"""A second file of the same name gets "name (1).ext", ... up to this many."""

MAX_PROTECTED_FILES: Final = 10_000
"""Files of `.storage` looked at when a file to send has other names (hard links)."""

DOWNLOAD_DEADLINE: Final = 120.0
"""Seconds from the start of a message's downloads until its files not yet saved are
given up (25 MiB at ~2 Mbit/s; one HTTP call of the client takes at most 30 s)."""

MAX_CONCURRENT_DOWNLOADS: Final = 3
"""Attachments of one message downloaded at once."""

# The setup flow.

MAX_ERROR_PLACEHOLDER: Final = 100
"""The relay's error text shown in the setup flow's form."""

MAX_CONVERSATION_NAME_CHARS: Final = 100
"""A named conversation's name (subentry_flow.py), and what of a conversation id the form
shows."""

MAX_LISTED_MEMBERS: Final = 5
"""Members listed to tell a conversation in the naming form's choices (then an ellipsis)."""

MAX_DEVICE_REPAIRS: Final = 10
"""Trust repairs ("a device of <person> wants to talk", issues/devices.py) shown at once per
agent: a person brings a phone or two at a time, a family group a handful. A relay inventing
devices must not flood the repairs list: past it one repair counts the devices that wait,
and each gets its own, the one seen last first, as room frees."""

MAX_GROUP_NOTICES: Final = 5
"""Notices "added to a group" (issues/groups.py) shown at once per agent: a person joins a
few groups at a time; a relay inventing groups must not flood the repairs list (the rest
wait for room, and "Add conversation" lists them all)."""
