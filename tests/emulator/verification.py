"""The identity verification code a person compares in Pacerelle's app (PROTOCOL.md).

Written from the protocol's words, not taken from the integration, so that a test that
compares the two checks both.
"""

import base64
import hashlib

CODE_GROUP_LENGTH = 4


def verification_code(identity_key: bytes) -> str:
    """SHA-256 of the 33-byte identity key, upper-case hex in groups of four."""
    digest = hashlib.sha256(identity_key).hexdigest().upper()
    return " ".join(
        digest[start : start + CODE_GROUP_LENGTH]
        for start in range(0, len(digest), CODE_GROUP_LENGTH)
    )


def verification_code_b64(identity_key_b64: str | None) -> str | None:
    """The code of a base64 identity key, or None when there is no key yet."""
    return verification_code(base64.b64decode(identity_key_b64)) if identity_key_b64 else None
