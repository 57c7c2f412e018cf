"""Limits and fixed sizes of the Signal protocol, as libsignal v0.97.4 sets them (consts.rs).

Every limit the engine enforces is named here, so a reader can compare them with libsignal's.
"""

# Double Ratchet limits (libsignal consts.rs).
MAX_FORWARD_JUMPS = 25_000
"""How far ahead of a receiving chain one message may jump (skipped keys are derived)."""
MAX_MESSAGE_KEYS = 2_000
"""Skipped message keys kept per receiving chain; the oldest are dropped first."""
MAX_RECEIVER_CHAINS = 5
"""Receiving chains kept per session; the oldest chain is dropped first."""
ARCHIVED_STATES_MAX_LENGTH = 40
"""Previous session states kept per peer after a new session replaces them."""
ARCHIVED_STATE_MAX_FORWARD_JUMPS = MAX_MESSAGE_KEYS
"""Ours, not libsignal's: how far a message may jump ahead in an archived session.

libsignal allows MAX_FORWARD_JUMPS in each of the up to 41 states it tries, which costs
seconds of pure-Python hashing for one forged frame; a real late message to an archived
session is never that far ahead, and keys beyond MAX_MESSAGE_KEYS would be dropped anyway.
"""

# Message format (protocol.rs).
CIPHERTEXT_MESSAGE_VERSION = 4
"""The only message version accepted: PQXDH sessions with SPQR (3 was X3DH, refused)."""
PRE_KYBER_MESSAGE_VERSION = 3
MAC_LENGTH = 8
"""SignalMessage carries the first 8 bytes of an HMAC-SHA256."""

# Key and field sizes.
KEY_LENGTH = 32
"""Root, chain, message cipher and MAC keys."""
IV_LENGTH = 16
PUBLIC_KEY_LENGTH = 33
"""A serialized Curve25519 public key: type byte 0x05 then 32 bytes."""
KYBER1024_CIPHERTEXT_LENGTH = 1569
"""A serialized Kyber1024 ciphertext: type byte 0x08 then 1568 bytes."""

# Bounds of what we parse: a frame bigger than this is refused before any work.
MAX_FRAME_LENGTH = 1 << 20
"""Whole framed payload (type byte and libsignal message)."""
MAX_CIPHERTEXT_LENGTH = MAX_FRAME_LENGTH
MAX_PQ_RATCHET_LENGTH = 4_096
"""SPQR messages carry one small chunk (tens of bytes); anything far bigger is hostile."""
MAX_ADDRESSES_LENGTH = 64
