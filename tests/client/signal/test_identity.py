"""The verification code a person compares: SHA-256 of the 33-byte identity key in
upper-case hex groups of four; another key gives another code, another length none."""

import hashlib

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.identity import verification_code

KEY = b"\x05" + bytes(range(32))


def test_the_code_is_the_grouped_digest() -> None:
    code = verification_code(KEY)
    groups = code.split(" ")
    assert len(groups) == 16
    assert all(len(group) == 4 for group in groups)
    assert "".join(groups) == hashlib.sha256(KEY).hexdigest().upper()
    assert verification_code(b"\x05" + bytes(32)) != code


@pytest.mark.parametrize("key", [KEY[:-1], KEY + b"\x00", b""])
def test_a_key_of_another_length_is_refused(key: bytes) -> None:
    with pytest.raises(SignalError) as refused:
        verification_code(key)
    assert refused.value.kind is SignalErrorKind.INVALID_KEY
