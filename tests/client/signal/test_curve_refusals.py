"""Curve25519 refusals and fallbacks the main curve tests leave out: malformed key lengths,
the u = 0 public key's forced Edwards sign, a PyNaCl without (or without the Ed25519 core of)
libsodium, and the all-zero agreement check behind libsodium's own."""

import builtins
import hashlib
import os

import pytest
from nacl import bindings

from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.curve import (
    KeyPair,
    agree,
    is_prime_order_point,
    xeddsa_sign,
    xeddsa_verify,
)
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind

GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
FIELD_PRIME = 2**255 - 19


@pytest.mark.parametrize(("private_length", "public_length"), [(31, 32), (32, 33), (0, 0)])
def test_agreement_refuses_keys_of_the_wrong_length(
    private_length: int, public_length: int
) -> None:
    with pytest.raises(SignalError, match="X25519 keys are 32 bytes") as failure:
        agree(os.urandom(private_length), os.urandom(public_length))
    assert failure.value.kind is SignalErrorKind.INVALID_KEY


@pytest.mark.parametrize("length", [0, 31, 33])
def test_signing_refuses_a_private_key_of_the_wrong_length(length: int) -> None:
    with pytest.raises(SignalError, match=f"private key of {length} bytes") as failure:
        xeddsa_sign(os.urandom(length), b"message", bytes(64))
    assert failure.value.kind is SignalErrorKind.INVALID_KEY


@pytest.mark.parametrize("length", [0, 31, 33])
def test_prime_order_check_refuses_a_key_of_the_wrong_length(length: int) -> None:
    valid = KeyPair.generate().public
    assert is_prime_order_point(valid)
    assert not is_prime_order_point((valid + valid)[:length])


A_U_ZERO = (FIELD_PRIME - 1).to_bytes(32, "little")  # u = 0: y = -1, x = 0, sign bit 0
R_SCALAR = int.from_bytes(hashlib.sha512(b"fixed nonce").digest(), "little") % GROUP_ORDER
COMMITMENT = bindings.crypto_scalarmult_ed25519_base_noclamp(R_SCALAR.to_bytes(32, "little"))


def _message_with_challenge_parity(parity: int) -> bytes:
    for counter in range(1000):
        message = counter.to_bytes(4, "little")
        digest = hashlib.sha512(COMMITMENT + A_U_ZERO + message).digest()
        if int.from_bytes(digest, "little") % GROUP_ORDER % 2 == parity:
            return message
    raise AssertionError("no such challenge in 1000 tries")


def test_u_zero_key_ignores_the_signature_sign_bit() -> None:
    # u = 0 is the Edwards point A = (0, -1), of order 2: with R = rB and s = r, sB = R + hA
    # holds exactly when the challenge h is even, no private key needed.
    signature = COMMITMENT + R_SCALAR.to_bytes(32, "little")
    with_sign = signature[:-1] + bytes((signature[-1] | 0x80,))
    assert signature[-1] & 0x80 == 0
    even, odd = _message_with_challenge_parity(0), _message_with_challenge_parity(1)
    # x = 0 has only the sign-0 encoding: the sign bit the signature carries is dropped, so
    # both forms give the same verdicts (a set bit would otherwise name no point at all).
    for sig in (signature, with_sign):
        assert xeddsa_verify(bytes(32), even, sig)
        assert not xeddsa_verify(bytes(32), odd, sig)


def test_without_pynacl_no_bindings_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    # PyNaCl is installed here: its absence can only be simulated.
    real_import = builtins.__import__

    def refuse_nacl(name: str, *args: object, **kwargs: object) -> object:
        if name == "nacl" or name.startswith("nacl."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse_nacl)
    assert curve._load_sodium() is None


@pytest.mark.parametrize("missing", ["has_crypto_core_ed25519", "has_crypto_scalarmult_ed25519"])
def test_pynacl_without_the_ed25519_core_is_not_used(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    # A PyNaCl built against a minimal libsodium cannot be installed alongside the real one.
    assert curve._load_sodium() is bindings
    monkeypatch.setattr(bindings, missing, False)
    assert curve._load_sodium() is None


def test_an_all_zero_agreement_is_refused_even_if_libsodium_returned_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # libsodium itself refuses small-order points (RuntimeError, tested with the real library
    # in test_curve.py); this is the check behind it, for a build that would not.
    class ZeroScalarmult:
        @staticmethod
        def crypto_scalarmult(private: bytes, public: bytes) -> bytes:
            return bytes(32)

    monkeypatch.setattr(curve, "_SODIUM", ZeroScalarmult)
    with pytest.raises(SignalError, match="all-zero key agreement") as failure:
        agree(b"\x11" * 32, b"\x09" + bytes(31))
    assert failure.value.kind is SignalErrorKind.INVALID_KEY
