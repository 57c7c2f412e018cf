"""One error type for the Signal engine, with a precise kind per failure."""

from __future__ import annotations

from enum import StrEnum


class SignalErrorKind(StrEnum):
    """Why an operation of the engine failed. Stable strings: logs and tests use them."""

    INVALID_KEY = "invalid_key"
    INVALID_SIGNATURE = "invalid_signature"
    INVALID_MESSAGE = "invalid_message"
    UNSUPPORTED_VERSION = "unsupported_version"
    INVALID_MAC = "invalid_mac"
    DUPLICATE_MESSAGE = "duplicate_message"
    NO_SESSION = "no_session"
    UNKNOWN_PREKEY = "unknown_prekey"
    UNTRUSTED_IDENTITY = "untrusted_identity"
    LIMIT_EXCEEDED = "limit_exceeded"
    INVALID_STATE = "invalid_state"
    PQ_RATCHET = "pq_ratchet"


class SignalError(Exception):
    """A failure of the Signal engine. The caller's stored state is never changed by one."""

    def __init__(self, kind: SignalErrorKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
