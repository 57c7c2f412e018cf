"""SPQR's KDF: the epoch secret is HKDF over the ML-KEM secret with the epoch in its info,
so each epoch and each shared secret gives its own; epochs are big-endian u64."""

import hashlib
import hmac

from custom_components.pacerelle.client.signal.spqr import kdf


def _rfc5869(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes((counter,)), hashlib.sha256).digest()
        out += block
    return out[:length]


def test_the_epoch_secret_is_hkdf_with_the_epoch_in_its_info() -> None:
    shared = b"k" * 32
    expected = _rfc5869(kdf.ZERO_SALT, shared, kdf.SCKA_KEY + (7).to_bytes(8, "big"), 32)
    assert kdf.epoch_secret(7, shared) == expected
    assert kdf.epoch_secret(8, shared) != expected
    assert kdf.epoch_secret(7, b"j" * 32) != expected


def test_epochs_are_big_endian_and_macs_are_hmac_sha256() -> None:
    assert kdf.u64_be(1) == b"\x00" * 7 + b"\x01"
    assert kdf.u64_be(2**64 - 1) == b"\xff" * 8
    assert kdf.mac_sha256(b"key", b"data") == hmac.new(b"key", b"data", "sha256").digest()
    assert kdf.hkdf_sha256(b"s", b"i", b"info", 80) == _rfc5869(b"s", b"i", b"info", 80)
