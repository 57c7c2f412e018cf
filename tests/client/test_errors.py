"""The client's errors answer by their kind: each class has the one a host acts on, an
API refusal keeps its status and message, and a send refusal its reason."""

from custom_components.pacerelle.client.errors import (
    ErrorKind,
    PacerelleApiError,
    PacerelleAuthError,
    PacerelleConnectionError,
    PacerelleError,
    PacerelleResponseError,
    SendError,
    SendRefusal,
)


def test_each_error_has_the_kind_a_host_acts_on() -> None:
    assert PacerelleError().kind is ErrorKind.FAILED
    assert PacerelleConnectionError("dns").kind is ErrorKind.NOT_CONNECTED
    assert PacerelleResponseError("garbage").kind is ErrorKind.BAD_ANSWER
    assert PacerelleApiError(500, "oops").kind is ErrorKind.SERVER_REFUSED
    assert PacerelleAuthError(401, "expired").kind is ErrorKind.AUTH_REFUSED
    assert SendError(SendRefusal.TOO_LONG, "x").kind is ErrorKind.SEND_REFUSED


def test_refusals_keep_what_they_were_told() -> None:
    refused = PacerelleAuthError(403, "installation revoked")
    assert isinstance(refused, PacerelleApiError)
    assert (refused.status, refused.message) == (403, "installation revoked")
    assert str(refused) == "HTTP 403: installation revoked"
    send = SendError(SendRefusal.BLOCKED_DEVICE, "ana device 2")
    assert send.reason is SendRefusal.BLOCKED_DEVICE
    assert str(send) == "blocked_device: ana device 2"
