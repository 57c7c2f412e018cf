"""Errors of the Pacerelle client library: what went wrong, precisely enough to act on."""


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
