"""Errors of the Pacerelle client library: what went wrong, precisely enough to act on."""

from enum import StrEnum


class PacerelleError(Exception):
    """Base class of every error raised by the client library."""


class PacerelleConnectionError(PacerelleError):
    """The server could not be reached (DNS, TCP, TLS, timeout)."""


class PacerelleResponseError(PacerelleError):
    """The server answered something that is not the protocol (garbage, wrong shape)."""


class PacerelleApiError(PacerelleError):
    """The server refused the request with an HTTP error and its `error` message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class PacerelleAuthError(PacerelleApiError):
    """A token or key was refused (401/403): revoked, expired, unknown or already used."""


class SendRefusal(StrEnum):
    """Why a send was refused: each has one translation on the Home Assistant side."""

    UNKNOWN_REQUEST = "unknown_request"
    NO_SESSION = "no_session"
    TOO_LONG = "too_long"
    NOTE_TOO_LONG = "note_too_long"
    BAD_ATTACHMENT = "bad_attachment"
    INVALID_DEVICE_ID = "invalid_device_id"
    QUEUE_FULL = "queue_full"
    # The trust door (trust/door.py):
    NO_TRUSTED_DEVICE = "no_trusted_device"  # nobody trusted to send it to
    BLOCKED_DEVICE = "blocked_device"  # the device or its key is blocked
    BLOCKED_GROUP_MEMBER = "blocked_group_member"  # a blocked device reads the group's keys
    UNTRUSTED_DEVICE = "untrusted_device"  # the device named has no trusted key here
    KEY_CHANGED = "key_changed"  # the answered device presents another key than the asker's
    UNTRUSTED_REQUEST = "untrusted_request"  # the LLM answering a request nobody trusts


class SendError(PacerelleError):
    """A send that cannot be made as asked (unknown request, no session yet, refused by
    the trust door...)."""

    def __init__(self, reason: SendRefusal, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail
