"""The identity verification code a user compares with Pacerelle's safety dialog."""

import hashlib

from .curve import SERIALIZED_PUBLIC_KEY_LENGTH
from .errors import SignalError, SignalErrorKind

CODE_GROUP_LENGTH = 4


def verification_code(identity_public_serialized: bytes) -> str:
    """SHA-256 of the 33-byte identity key, upper-case hex in space-separated groups of four."""
    if len(identity_public_serialized) != SERIALIZED_PUBLIC_KEY_LENGTH:
        raise SignalError(
            SignalErrorKind.INVALID_KEY,
            f"identity key of {len(identity_public_serialized)} bytes",
        )
    digest = hashlib.sha256(identity_public_serialized).hexdigest().upper()
    return " ".join(
        digest[start : start + CODE_GROUP_LENGTH]
        for start in range(0, len(digest), CODE_GROUP_LENGTH)
    )
