"""Every bound on what one agent keeps at rest, in one place (as libsignal's consts.rs).

The agent's state was one encrypted JSON document (encrypted_file.py; the per-record store of
client/state/ keeps the same bounds, so what it holds would still fit one). Loading refuses a
file larger than MAX_DOCUMENT_BYTES and the writer refuses to write one, so anything a
sender or the relay can grow is bounded here, and store_bounds.py evicts (oldest first,
logged and counted) before a save rather than let the document reach that size.

Worst case of each part, serialized (JSON escapes can make a character up to 12 bytes, so
budgets are in bytes of the stored form, never in characters):
    requests received, not yet handed over   MAX_RECEIVED x MAX_REQUEST_BYTES  16 MiB
    pending requests                         MAX_PENDING_BYTES               16 MiB
    history (requests and replies)           MAX_HISTORY_BYTES                8 MiB
    sessions                                 MAX_SESSION_RECORDS records, each ~2 KiB
                                             fresh, more with archived states and
                                             skipped keys (libsignal's own bounds)
    group keys                               MAX_KEYED_GROUPS x MAX_KEYS_PER_GROUP
                                             x MAX_GROUP_KEY_BYTES     4 MiB
    group message seals                      MAX_GROUP_SEALS x ~19 bytes       2 MiB
    receipts, checkpoints, other keys, rest  well under 2 MiB
The sum stays under MAX_DOCUMENT_BYTES for every realistic state; what no budget covers
(a session record swollen by skipped keys, say) is caught by the writer's size check, and
store_bounds.shrink evicts further before writing.
"""

from typing import Final

MAX_DOCUMENT_BYTES: Final = 64 * 1024 * 1024
"""The encrypted file, header and tag included: the ONE limit of both reading and writing."""

MAX_REQUEST_BYTES: Final = 256 * 1024
"""One incoming request as stored (text, attachment descriptors, widget answer). A bigger
one is refused when it arrives: 256 K ASCII characters, or ~40 K that JSON must escape, are
far beyond any command to a home (what we send is capped at 64 K characters)."""

MAX_RECEIVED: Final = 64
"""Requests decrypted but not yet handed over. One batch (inbox_pipeline.MAX_BATCH, 50) is
handed over right after it is saved, so more are left only by crashes half-way; beyond this
the oldest, which the relay never redelivered, are evicted (never the batch in hand)."""

MAX_PENDING: Final = 500
"""Requests not yet marked processed, by count..."""
MAX_PENDING_BYTES: Final = 16 * 1024 * 1024
"""...and by stored size; beyond either, the oldest pending requests are evicted down to
the low-water marks below."""

MAX_HISTORY_BYTES: Final = 8 * 1024 * 1024
"""Handled requests and replies kept as history (also at most HISTORY_LIMIT of each); the
oldest, by their time, go first, down to HISTORY_BYTES_LOW_WATER."""

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

MAX_BLOB_BYTES: Final = 25 * 1024 * 1024
"""One encrypted file as the relay stores it (its own limit): uploads over it are refused
before they leave, downloads are read no further."""

GCM_TAG_BYTES: Final = 16
MAX_FILE_BYTES: Final = MAX_BLOB_BYTES - GCM_TAG_BYTES
"""One file's plaintext: what fits one blob once sealed (AES-256-GCM adds its tag)."""

MAX_FILES_PER_SEND: Final = 10
"""Files attached to one message we send (each sealed and uploaded before the send)."""
