"""KEM keys and ciphertexts on the wire carry libsignal's type byte 0x08 (Kyber1024):
serialized with it, read back only with it and at the exact size."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem import (
    KYBER1024_KEY_TYPE,
    deserialize_kyber_ciphertext,
    deserialize_kyber_public,
    is_kyber1024_secret,
    kyber1024,
    kyber1024_native,
    serialize_kyber_ciphertext,
    serialize_kyber_public,
)


def test_public_keys_and_ciphertexts_round_trip_with_their_type_byte() -> None:
    public = bytes(range(256)) * (kyber1024.PUBLIC_KEY_SIZE // 256) + bytes(
        kyber1024.PUBLIC_KEY_SIZE % 256
    )
    serialized = serialize_kyber_public(public)
    assert serialized[0] == KYBER1024_KEY_TYPE
    assert len(serialized) == kyber1024.PUBLIC_KEY_SIZE + 1
    assert deserialize_kyber_public(serialized) == public
    ciphertext = b"\x07" * kyber1024.CIPHERTEXT_SIZE
    assert deserialize_kyber_ciphertext(serialize_kyber_ciphertext(ciphertext)) == ciphertext


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x07" + bytes(kyber1024.PUBLIC_KEY_SIZE),  # another key type
        b"\x08" + bytes(kyber1024.PUBLIC_KEY_SIZE - 1),  # one byte short
        b"\x08" + bytes(kyber1024.PUBLIC_KEY_SIZE + 1),  # one byte long
    ],
)
def test_other_public_keys_are_refused_as_invalid_keys(data: bytes) -> None:
    with pytest.raises(SignalError) as refused:
        deserialize_kyber_public(data)
    assert refused.value.kind is SignalErrorKind.INVALID_KEY


def test_a_wrong_ciphertext_is_an_invalid_message_and_a_wrong_size_not_serialized() -> None:
    with pytest.raises(SignalError) as refused:
        deserialize_kyber_ciphertext(b"\x09" + bytes(kyber1024.CIPHERTEXT_SIZE))
    assert refused.value.kind is SignalErrorKind.INVALID_MESSAGE
    with pytest.raises(SignalError) as refused:
        serialize_kyber_public(bytes(kyber1024.PUBLIC_KEY_SIZE - 1))
    assert refused.value.kind is SignalErrorKind.INVALID_KEY


def test_a_secret_is_told_apart_by_its_length() -> None:
    assert is_kyber1024_secret(bytes(kyber1024_native.SEED_SIZE))
    assert is_kyber1024_secret(bytes(kyber1024.SECRET_KEY_SIZE))
    assert not is_kyber1024_secret(bytes(kyber1024_native.SEED_SIZE + 1))
