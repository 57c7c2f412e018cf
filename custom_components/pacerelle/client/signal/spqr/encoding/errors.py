"""Errors of the erasure code, mirroring spqr's EncodingError and PolynomialError."""

from enum import StrEnum

from ...errors import SignalError, SignalErrorKind


class EncodingErrorReason(StrEnum):
    """spqr's failure variants, one for one (stable strings)."""

    # PolynomialError::MessageLengthEven
    MESSAGE_LENGTH_EVEN = "message_length_even"
    # PolynomialError::MessageLengthTooLong
    MESSAGE_LENGTH_TOO_LONG = "message_length_too_long"
    # PolynomialError::SerializationInvalid
    SERIALIZATION_INVALID = "serialization_invalid"
    # EncodingError::ChunkIndexDecodingError
    CHUNK_INDEX = "chunk_index"
    # EncodingError::ChunkDataDecodingError
    CHUNK_DATA = "chunk_data"


_KIND_OF_REASON = {
    EncodingErrorReason.MESSAGE_LENGTH_EVEN: SignalErrorKind.PQ_RATCHET,
    EncodingErrorReason.MESSAGE_LENGTH_TOO_LONG: SignalErrorKind.PQ_RATCHET,
    EncodingErrorReason.SERIALIZATION_INVALID: SignalErrorKind.INVALID_STATE,
    EncodingErrorReason.CHUNK_INDEX: SignalErrorKind.INVALID_MESSAGE,
    EncodingErrorReason.CHUNK_DATA: SignalErrorKind.INVALID_MESSAGE,
}


class EncodingError(SignalError):
    """A SignalError whose `reason` says which of spqr's encoding errors it is."""

    def __init__(self, reason: EncodingErrorReason, detail: str) -> None:
        super().__init__(_KIND_OF_REASON[reason], f"{reason}: {detail}")
        self.reason = reason
