"""Each of spqr's encoding errors is a SignalError of the kind its cause calls for: a bad
message from the peer is INVALID_MESSAGE, a bad stored state INVALID_STATE."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.encoding.errors import (
    EncodingError,
    EncodingErrorReason,
)


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        (EncodingErrorReason.MESSAGE_LENGTH_EVEN, SignalErrorKind.PQ_RATCHET),
        (EncodingErrorReason.MESSAGE_LENGTH_TOO_LONG, SignalErrorKind.PQ_RATCHET),
        (EncodingErrorReason.SERIALIZATION_INVALID, SignalErrorKind.INVALID_STATE),
        (EncodingErrorReason.CHUNK_INDEX, SignalErrorKind.INVALID_MESSAGE),
        (EncodingErrorReason.CHUNK_DATA, SignalErrorKind.INVALID_MESSAGE),
    ],
)
def test_every_reason_has_its_kind(reason: EncodingErrorReason, kind: SignalErrorKind) -> None:
    error = EncodingError(reason, "detail")
    assert isinstance(error, SignalError)
    assert error.kind is kind
    assert error.reason is reason
    assert str(reason) in str(error)
