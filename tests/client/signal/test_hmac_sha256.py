"""The engine's HMAC/HKDF primitives give the bytes of the standard library and RFC 5869,
and the derivations written out for speed give those of the generic HKDF."""

import hmac
import os

import pytest

from custom_components.pacerelle.client.signal import hmac_sha256 as primitives
from custom_components.pacerelle.client.signal import ratchet_keys
from custom_components.pacerelle.client.signal.spqr import chain, kdf


@pytest.mark.parametrize("key_length", [0, 1, 32, 63, 64, 65, 200])
def test_hmac_matches_the_standard_library(key_length: int) -> None:
    for message_length in (0, 1, 55, 64, 1000):
        key, message = os.urandom(key_length), os.urandom(message_length)
        expected = hmac.digest(key, message, "sha256")
        assert primitives.hmac_sha256(key, message) == expected
        assert primitives._openssl_hmac_sha256(key, message) == expected


def test_hkdf_rfc5869_case_1() -> None:
    okm = primitives.hkdf_sha256(
        bytes.fromhex("000102030405060708090a0b0c"),
        bytes(22 * [0x0B]),
        bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"),
        42,
    )
    assert okm.hex() == (
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
    )


def test_hkdf_without_salt_is_rfc5869_case_3() -> None:
    okm = primitives.hkdf_sha256(None, bytes(22 * [0x0B]), b"", 42)
    assert okm.hex() == (
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
    )
    assert primitives.hkdf_sha256(b"", bytes(22 * [0x0B]), b"", 42) == okm


@pytest.mark.parametrize("length", [0, primitives.MAX_HKDF_OUTPUT + 1])
def test_hkdf_refuses_lengths_out_of_range(length: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        primitives.hkdf_sha256(None, b"ikm", b"", length)


@pytest.mark.parametrize("pq_key", [None, b"", b"\x07" * 32])
def test_message_keys_are_the_generic_hkdf(pq_key: bytes | None) -> None:
    seed = os.urandom(32)
    okm = primitives.hkdf_sha256(pq_key, seed, ratchet_keys.MESSAGE_KEYS_INFO, 80)
    keys = ratchet_keys.derive_message_keys(seed, 9, pq_key)
    assert (keys.cipher_key, keys.mac_key, keys.iv, keys.counter) == (
        okm[:32],
        okm[32:64],
        okm[64:],
        9,
    )


@pytest.mark.parametrize("ctr", [1, 2, 255, 256, 2**32 - 1])
def test_spqr_chain_step_is_the_generic_hkdf(ctr: int) -> None:
    chain_key = os.urandom(32)
    info = ctr.to_bytes(4, "big") + kdf.CHAIN_NEXT
    okm = primitives.hkdf_sha256(kdf.ZERO_SALT, chain_key, info, 64)
    assert chain._step(chain_key, ctr) == (okm[:32], okm[32:])
