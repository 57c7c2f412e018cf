"""Native ML-KEM-1024 refuses wrong sizes, and an OpenSSL without ML-KEM, as SignalErrors."""

import pytest
from cryptography.exceptions import UnsupportedAlgorithm

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem import kyber1024_native
from custom_components.pacerelle.client.signal.kem.kyber1024 import CIPHERTEXT_SIZE


class _NoMlKem:
    """`cryptography` linked against an OpenSSL without ML-KEM: every constructor refuses."""

    @staticmethod
    def generate() -> None:
        raise UnsupportedAlgorithm("ML-KEM-1024 is not supported by this backend")

    @staticmethod
    def from_seed_bytes(seed: bytes) -> None:
        raise UnsupportedAlgorithm("ML-KEM-1024 is not supported by this backend")


@pytest.fixture
def no_mlkem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kyber1024_native, "MLKEM1024PrivateKey", _NoMlKem)


def test_round_trip_with_a_real_key() -> None:
    public, seed = kyber1024_native.generate_keypair()
    assert len(seed) == kyber1024_native.SEED_SIZE
    assert kyber1024_native.public_key(seed) == public
    assert kyber1024_native.unavailable_reason() is None


@pytest.mark.parametrize("size", [0, kyber1024_native.SEED_SIZE - 1, 2400])
def test_a_seed_of_the_wrong_size_is_an_invalid_key(size: int) -> None:
    with pytest.raises(SignalError) as caught:
        kyber1024_native.public_key(bytes(size))
    assert caught.value.kind is SignalErrorKind.INVALID_KEY
    with pytest.raises(SignalError) as caught:
        kyber1024_native.decapsulate(bytes(size), bytes(CIPHERTEXT_SIZE))
    assert caught.value.kind is SignalErrorKind.INVALID_KEY


@pytest.mark.parametrize("size", [0, CIPHERTEXT_SIZE - 1, CIPHERTEXT_SIZE + 1])
def test_a_ciphertext_of_the_wrong_size_is_an_invalid_message(size: int) -> None:
    _, seed = kyber1024_native.generate_keypair()
    with pytest.raises(SignalError) as caught:
        kyber1024_native.decapsulate(seed, bytes(size))
    assert caught.value.kind is SignalErrorKind.INVALID_MESSAGE


@pytest.mark.usefixtures("no_mlkem")
def test_without_mlkem_the_reason_is_given() -> None:
    reason = kyber1024_native.unavailable_reason()
    assert reason is not None
    assert "ML-KEM-1024" in reason


def test_without_mlkem_nothing_is_generated_or_opened() -> None:
    _, seed = kyber1024_native.generate_keypair()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kyber1024_native, "MLKEM1024PrivateKey", _NoMlKem)
        for attempt in (
            kyber1024_native.generate_keypair,
            lambda: kyber1024_native.public_key(seed),
            lambda: kyber1024_native.decapsulate(seed, bytes(CIPHERTEXT_SIZE)),
        ):
            with pytest.raises(SignalError) as caught:
                attempt()
            assert caught.value.kind is SignalErrorKind.INVALID_STATE
