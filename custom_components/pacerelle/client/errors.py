"""Errors of the Pacerelle client library: what went wrong, precisely enough to act on."""

from enum import StrEnum
from typing import ClassVar


class ErrorKind(StrEnum):
    """What a host makes of an error: one answer per kind, whichever class raised it."""

    FAILED = "failed"  # the call failed on the way (a key, a group, a size...)
    NOT_CONNECTED = "not_connected"  # Pacerelle could not be reached
    BAD_ANSWER = "bad_answer"  # Pacerelle answered something that is not the protocol
    SERVER_REFUSED = "server_refused"  # an HTTP error (PacerelleApiError.status)
    AUTH_REFUSED = "auth_refused"  # a token or key refused
    REVOKED = "revoked"  # the installation token refused: only signing in again helps
    STORE = "store"  # the agent's store could not be read or written
    QUEUE_FULL = "queue_full"
    INVALID_WIDGET = "invalid_widget"
    KEY_CHANGED = "key_changed"  # a trust decision for a key the device no longer presents
    SEND_REFUSED = "send_refused"  # a send refused (SendError.reason says why)


class PacerelleError(Exception):
    """Base class of every error raised by the client library; `kind` says what it means."""

    kind: ClassVar[ErrorKind] = ErrorKind.FAILED


class PacerelleConnectionError(PacerelleError):
    """The server could not be reached (DNS, TCP, TLS, timeout)."""

    kind = ErrorKind.NOT_CONNECTED


class PacerelleResponseError(PacerelleError):
    """The server answered something that is not the protocol (garbage, wrong shape)."""

    kind = ErrorKind.BAD_ANSWER


class PacerelleApiError(PacerelleError):
    """The server refused the request with an HTTP error and its `error` message."""

    kind = ErrorKind.SERVER_REFUSED

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class PacerelleAuthError(PacerelleApiError):
    """A token or key was refused (401/403): revoked, expired, unknown or already used."""

    kind = ErrorKind.AUTH_REFUSED


class SendRefusal(StrEnum):
    """Why a send was refused: each has one translation on the Home Assistant side."""

    UNKNOWN_REQUEST = "unknown_request"
    UNKNOWN_CONVERSATION = "unknown_conversation"  # not the agent's, not named, never seen
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

    kind = ErrorKind.SEND_REFUSED

    def __init__(self, reason: SendRefusal, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail
