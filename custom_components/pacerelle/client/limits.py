"""Every bound of the client, in one place (as libsignal's consts.rs): one name per bound.

Order: what the agent keeps at rest, what the relay may send, what it sends and the rules of
its conversations. The Signal engine's bounds are in signal/consts.py, Home Assistant's in its
limits.py. Loading refuses a stored state over MAX_DOCUMENT_BYTES and the writer refuses to
write one, so whatever a sender or the relay can grow is bounded here, and store_bounds.py
evicts (oldest first, logged, counted) before a save. Budgets are in bytes of the stored form
(a JSON escape can make one character 12 bytes), never characters: received and pending
requests 16 MiB each, history 8 MiB, group keys 4 MiB, group seals 2 MiB, the rest under
2 MiB; sessions are bounded by MAX_SESSION_RECORDS. Whatever no budget covers is caught by
the writer's size check (store_bounds.shrink).
"""

from dataclasses import dataclass
from typing import Final

MAX_DOCUMENT_BYTES: Final = 64 * 1024 * 1024
"""The encrypted file, header and tag included: the ONE limit of both reading and writing."""

MAX_REQUEST_BYTES: Final = 256 * 1024
"""One incoming request as stored (text, attachment descriptors, widget answer). A bigger
one is refused when it arrives: 256 K ASCII characters, or ~40 K that JSON must escape, are
far beyond any command to a home (what we send is capped at 64 K characters)."""

MAX_RECEIVED: Final = 64
"""Requests decrypted but not yet handed over. One batch (MAX_BATCH) is
handed over right after it is saved, so more are left only by crashes half-way; beyond this
the oldest, which the relay never redelivered, are evicted (never the batch in hand)."""

MAX_PENDING: Final = 500
"""Requests not yet marked processed, by count..."""
MAX_PENDING_BYTES: Final = 16 * 1024 * 1024
"""...and by stored size; beyond either, the oldest pending requests are evicted down to
the low-water marks below."""

MAX_HISTORY_ENTRIES: Final = 50
"""Handled requests, and replies, kept as history per kind (as the MCP server's history): what a
model or an owner looks back on; older ones rotate out."""

MAX_HISTORY_BYTES: Final = 8 * 1024 * 1024
"""Handled requests and replies kept as history (also at most MAX_HISTORY_ENTRIES of each);
the oldest, by their time, go first, down to low_water(MAX_HISTORY_BYTES)."""

LOW_WATER_PERCENT: Final = 90
"""A bound of pending requests or history, once passed, is restored to this share of it,
not to the bound itself: an agent at the bound then evicts once in many messages (one
commit deleting ~50 pending requests), not at every message (a delete of the oldest, its
log line and count in each commit: the cost per message at the caps was five times
that of an empty store). Only the oldest go, as before, and never one of the batch in
hand: the low-water mark of the bytes is above MAX_BATCH x MAX_REQUEST_BYTES (tested)."""


def low_water(bound: int) -> int:
    """What eviction restores once `bound` is passed (LOW_WATER_PERCENT of it)."""
    return bound * LOW_WATER_PERCENT // 100


MAX_ACCEPTED_RECEIPTS: Final = 2000
MAX_REJECTED_RECEIPTS: Final = 500
"""Ids of messages already handed over or refused, so that a redelivery is recognised."""

MAX_HANDED_OVER: Final = MAX_ACCEPTED_RECEIPTS
"""Marks of the last hand-overs, kept outside the restorable store (handed_over.py): as
many as the receipts, so a restored state refuses what the newer one would have."""

MAX_HANDED_OVER_FILE_BYTES: Final = 1024 * 1024
"""The hand-over marks file read at start (state/handed_over_file.py): 64 KiB at
MAX_HANDED_OVER slots."""

MAX_DEVICES_PER_PEER: Final = 10
"""Session records of one person in one conversation (one per device). Pacerelle shows a
person's phones and browsers; ten leaves room for old devices while a relay inventing
devices cannot grow the store (~2 KiB and ~16 ms of key agreement each) without bound."""

MAX_LAST_DEVICES: Final = 1024
"""People and conversations whose last device is remembered (to address replies): one
entry per person who ever wrote in a conversation, so a relay inventing people would grow it
without end; the least recently heard from are forgotten first."""

MAX_SESSION_RECORDS: Final = 256
"""Session records in all: every person the agent talks to, in every conversation. With
libsignal's ARCHIVED_STATES_MAX_LENGTH archived states each, the store stays loadable."""

MAX_GROUP_KEY_EPOCHS: Final = 3
"""Epochs of group keys kept per sender (person and device) in a group: every change of
members starts an epoch, so a message sealed before the last two changes, still in flight,
opens; older ones are lost (the emulator, as the relay, keeps two: KEPT_EPOCHS). One key per
sender and epoch (group_key_bounds.py)."""

MAX_KEYS_PER_GROUP: Final = 64
"""Group keys kept per group: two per member of the largest group (32) at its current and
last epoch; beyond it, keys of untrusted senders go first, then the least recently used."""

MAX_KEYED_GROUPS: Final = 64
"""Groups whose keys are kept; beyond it, whole groups go, those without a trusted key
first, then the least recently used. With MAX_KEYS_PER_GROUP, at most 4096 keys (~350
bytes each as Pacerelle's apps make them: ~1.4 MiB)."""

MAX_SEALS_PER_KEY: Final = 10_000
"""Group messages remembered per group key against replays (inbox.py): the key's last ones,
taken or sent. Only the key's own messages age a seal out, never another sender's."""

MAX_GROUP_SEALS: Final = 100_000
"""Seals of all group keys together (~19 bytes each stored: ~1.9 MiB); beyond, the least
valuable keys go with their seals (group_key_bounds.py rule 3)."""

MAX_GROUP_KEY_BYTES: Final = 1024
"""One group key as stored. Its ids are at most 128 + 128 + 256 characters (conversation,
key id, sender), which JSON escapes can make 6 KiB; Pacerelle's are short ASCII ids, so a
bigger key comes from a relay playing with the store's budget and is not learned."""

MAX_NEW_GROUP_KEY_SESSIONS: Final = 64
"""Group key envelopes of one fetch that start a Signal session (a key agreement, ~9 ms
each here): two per member of the largest group. The rest wait for the next fetch, so a
relay listing 256 envelopes over sessions it makes up costs ~0.6 s of CPU, not ~2.3 s."""

MAX_SEND_TEXT_CHARS: Final = 64 * 1024
"""One message the agent sends (automations, notify, Assist, the LLM), in characters: well
under MAX_REQUEST_BYTES once sealed, and more than any app shows at once."""

MAX_DOCUMENT_SHRINKS: Final = 3
"""Extra evictions tried when the writer finds a document too large (one is the rule)."""

MAX_ALIGNED_CHANGES: Final = 16
"""Changed places of one collection beyond which a commit is no usual one
(values/alignment.py): the store's diff then walks it all."""

MAX_UNCERTAIN_SENDS: Final = 100
"""Sends that may or may not have reached the relay (the link dropped right after), kept
for the status and its sensor; the oldest are forgotten first."""

MAX_NAMED_CONVERSATIONS: Final = 1000
"""Conversations whose recipient the store keeps while the host names them (a subentry
each: conversations/seen.py); past it, the rest resolve as unnamed ones do."""

MAX_TRUST_RECORDS: Final = 1000
"""Trust decisions kept (values/trust_book.py): undecided records go first, trusted and blocked
ones only when nothing else is left, so invented devices cannot erase a decision."""

MAX_DECRYPT_FAILURE_DEVICES: Final = 256
"""Devices whose decryption failures are counted; the least recently seen are forgotten."""

RESTORE_REKEYED_PREKEYS: Final = 100
"""One-time prekey ids re-keyed after a restore: what the lost state most likely published."""

MAX_HELD_FOR_REKEY: Final = 2 * RESTORE_REKEYED_PREKEYS
"""No re-keying on a failure while this many one-time prekeys are held (a relay forging
`unknown_prekey` failures at every start cannot grow the store without bound)."""

MAX_QUEUED_SENDS: Final = 100
"""Sends kept while offline. Alerts and answers, not bulk: a hundred covers hours of a busy
home; beyond, the caller is told at once rather than the oldest alert dropped."""

MAX_QUEUED_SEND_BYTES: Final = 4 * 1024 * 1024
"""Their stored frames together (a text is at most MAX_SEND_TEXT_CHARS, ~100 KiB once
sealed and base64-encoded): well inside the document's budget."""

MAX_EXPIRE_AFTER: Final = 7 * 24 * 3600.0
"""Seconds a queued send may be told to wait for the connection: a week-old alert misleads."""

DEFAULT_EXPIRE_AFTER: Final = 3600.0
"""How long a queued send may wait for the connection unless the caller says otherwise: an
alert an hour late is still worth reading; a day late it misleads."""

MAX_CHECKPOINTS: Final = 200
"""Checkpoints kept (a model's notes of long tasks); the oldest completed go first."""

MAX_NOTE_CHARS: Final = 2000
"""The note kept with a request marked processed (in history)."""

# What the relay may send (a hostile or broken relay cannot make us read, parse or keep
# without limit).

MAX_ANSWER_BYTES: Final = 1024 * 1024
"""One REST answer (blobs aside) or one gateway frame."""

MAX_JSON_DEPTH: Final = 32
"""Nesting of a relay's JSON: our protocol nests 4 levels at most."""

MAX_JSON_CONTAINERS: Final = 4096
"""Objects and lists walked when checking the depth of one answer."""

MAX_SERVER_TEXT_CHARS: Final = 2048
"""A string the relay gives (URLs, names, messages) unless a tighter bound says otherwise."""

MAX_RELAY_ID_CHARS: Final = 256
"""An id the relay gives (messages, conversations, people, blobs)."""

MAX_TOKEN_CHARS: Final = 4096
"""A token the relay issues (installation or runtime)."""

MAX_RELAY_ERROR_CHARS: Final = 300
"""What is kept of an error message of the relay (REST body or gateway frame): enough to
read, too little to flood a log."""

MIN_EXPIRES_IN: Final = 1.0
MAX_EXPIRES_IN: Final = 24 * 3600.0
"""Seconds a token's `expires_in` may say: runtime tokens live 15 minutes and
authorizations about as long; a day leaves room."""

HTTP_REQUEST_TIMEOUT: Final = 30.0
"""Seconds one REST call to the relay may take, its answer read; the group-key fetch, whose
requests run side by side, is bounded by it as a whole."""

HANDSHAKE_TIMEOUT: Final = 20.0
"""Seconds the gateway's WebSocket handshake may take before the connection is retried."""

MAX_RENEW_MARGIN: Final = 120.0
"""Seconds before expiry a runtime token is renewed at the latest."""

MAX_FRAME_CHARS: Final = MAX_ANSWER_BYTES
"""One gateway text frame, in characters (a frame over it is refused)."""

MAX_FRAME_BYTES: Final = MAX_FRAME_CHARS * 4
"""The same frame as UTF-8 (aiohttp's max_msg_size): at most 4 bytes a character."""

MAX_OVERSIZED_VALUES: Final = 4096
"""`,` `[` `{` in a frame over MAX_FRAME_CHARS that is still read to tell its sender why."""

MAX_PAYLOAD_BYTES: Final = 768 * 1024
"""One message's sealed payload, decoded from base64."""

MAX_MESSAGE_ATTACHMENTS: Final = 32
"""Attachment descriptors of one incoming message."""

MAX_ATTACHMENT_TEXT_CHARS: Final = 512
"""A string of an attachment descriptor: the relay's (id, name, mime, blob id) and the one
inside the encryption (name, mime)."""

MAX_BLOB_BYTES: Final = 25 * 1024 * 1024
"""One encrypted file as the relay stores it (its own limit): the size an incoming
descriptor may claim; uploads over it are refused before they leave, downloads are read no
further."""

GCM_NONCE_BYTES: Final = 12
GCM_TAG_BYTES: Final = 16
"""AES-GCM's nonce and tag (every AES-GCM the client does: files, group keys, history keys,
the store's rows and its earlier file): 96-bit nonces, 128-bit tags."""
MAX_FILE_BYTES: Final = MAX_BLOB_BYTES - GCM_TAG_BYTES
"""One file's plaintext: what fits one blob once sealed (AES-256-GCM adds its tag)."""

MAX_FILES_PER_SEND: Final = 10
"""Files attached to one message we send (each sealed and uploaded before the send)."""

MAX_DIGEST_CHARS: Final = 128
"""A blob's digest as the relay gives it (a hex SHA-256 is 64)."""

MAX_GROUP_KEY_ENVELOPES: Final = 256
"""Group key envelopes of one answer of the relay."""

MAX_PREKEYS_PER_UPLOAD: Final = 100
"""One-time prekeys in one upload request (more go in further requests)."""

MAX_REMEMBERED_REFUSALS: Final = 256
"""Refused message ids remembered so that a repeat is not logged at warning again."""

MAX_QUEUED_FRAMES: Final = 100
"""Gateway frames waiting for the inbox pipeline: two of its batches."""

MAX_QUEUED_FRAME_BYTES: Final = 8 * 1024 * 1024
"""Their size together: about ten frames of the largest payload the relay takes."""

MAX_BATCH: Final = 50
"""Requests the inbox pipeline decrypts and saves together before handing them over."""

MAX_DEFERRED: Final = 50
"""Group messages kept in memory while their key has not come..."""
MAX_DEFERRED_BYTES: Final = 4 * 1024 * 1024
"""...and their size together; beyond either the oldest is dropped."""

# What the agent is and says, and the rules of its conversations.

MAX_DEVICE_ID: Final = 999_999_999
"""A device id: nine digits, what Pacerelle's apps and the relay give."""

MAX_AGENT_NAME: Final = 100
"""The agent's name as the relay and the apps show it, in characters."""

MAX_AGENT_DESCRIPTION: Final = 1000
"""The agent's description, in characters."""

MAX_GROUP_KEY_ID_CHARS: Final = 128
"""The id of a group key (current keys and the keys of history version 1)."""

MAX_WIDGET_ID_CHARS: Final = 128
"""The id of a widget, of its options and of the request it refers to."""

MAX_WIDGET_TITLE_CHARS: Final = 200
MAX_WIDGET_BODY_CHARS: Final = 2000
MAX_WIDGET_LABEL_CHARS: Final = 100
MAX_WIDGET_BUTTON_CHARS: Final = 40
"""A widget's title, body, labels and buttons: what a phone shows without scrolling."""

MAX_WIDGET_OPTIONS: Final = 20
MAX_WIDGET_FIELDS: Final = 20
MAX_WIDGET_SCOPES: Final = 20
MAX_WIDGET_ACCEPT: Final = 20
MAX_WIDGET_FILES: Final = 20
"""A widget's choices, form fields, permission scopes, accepted file types and files."""

MAX_CHECKPOINT_TEXT_CHARS: Final = 2000
"""A checkpoint's summary and its next action."""

MAX_CHECKPOINT_LABEL_CHARS: Final = 200
"""A checkpoint's host session label."""


# Timing (seconds)

PING_INTERVAL: Final = 30.0
RECEIVE_TIMEOUT: Final = 2.5 * PING_INTERVAL
"""The gateway is pinged every PING_INTERVAL; no frame and no pong for RECEIVE_TIMEOUT and
the link is dead (a reconnect follows)."""

STABLE_CONNECTION: Final = 60.0
MIN_HEALTHY_CONNECTION: Final = 1.0
"""A connection that lasted STABLE_CONNECTION resets the reconnect backoff; one that ended on
an expired token sooner than MIN_HEALTHY_CONNECTION is backed off (no hot loop)."""

RENEW_FRACTION: Final = 0.8
MIN_LIFETIME: Final = 1.0
"""A runtime token is renewed once RENEW_FRACTION of its life has passed (at most
MAX_RENEW_MARGIN before its end); a lifetime under MIN_LIFETIME is a malformed answer."""

CONFIRM_WINDOW: Final = 3.0
"""A written send is confirmed once the connection stayed up this long after it without the
relay answering `ERROR` for its id (outbox/confirmations.py)."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """The client's bounds a host shows and checks before calling (each defined above)."""

    agent_name: int = MAX_AGENT_NAME
    agent_description: int = MAX_AGENT_DESCRIPTION
    send_text_chars: int = MAX_SEND_TEXT_CHARS
    note_chars: int = MAX_NOTE_CHARS
    history_entries: int = MAX_HISTORY_ENTRIES
    file_bytes: int = MAX_FILE_BYTES
    files_per_send: int = MAX_FILES_PER_SEND
    queued_sends: int = MAX_QUEUED_SENDS
    queued_send_bytes: int = MAX_QUEUED_SEND_BYTES
    expire_after: float = MAX_EXPIRE_AFTER
    default_expire_after: float = DEFAULT_EXPIRE_AFTER
    checkpoint_text_chars: int = MAX_CHECKPOINT_TEXT_CHARS
    checkpoint_label_chars: int = MAX_CHECKPOINT_LABEL_CHARS


BOUNDS: Final = Bounds()
"""The one instance: each field is the constant of its name above, with its reason."""
