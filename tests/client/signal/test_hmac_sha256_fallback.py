"""Where CPython's private `_hmac` is missing (another interpreter, before 3.14) or lacks
`compute_sha256`, HMAC-SHA256 falls back to OpenSSL's `hmac.digest`, with the same bytes;
and HKDF outputs of one block or less are that block's prefix."""

import hmac
import importlib
import sys
import types

import pytest

from custom_components.pacerelle.client.signal import hmac_sha256 as primitives

KEY = bytes(range(40))
MESSAGE = b"Pacerelle HMAC fallback"


def test_without_the_hmac_module_openssl_computes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # `_hmac` ships with this interpreter: its absence can only be simulated.
    real_import_module = importlib.import_module

    def without_hmac(name: str, package: str | None = None) -> types.ModuleType:
        if name == "_hmac":
            raise ModuleNotFoundError("No module named '_hmac'", name="_hmac")
        return real_import_module(name, package)

    monkeypatch.setattr(importlib, "import_module", without_hmac)
    compute = primitives._native_hmac_sha256()
    assert compute is primitives._openssl_hmac_sha256
    assert compute(KEY, MESSAGE) == hmac.digest(KEY, MESSAGE, "sha256")


def test_an_hmac_module_without_sha256_falls_back_to_openssl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "_hmac", types.ModuleType("_hmac"))
    compute = primitives._native_hmac_sha256()
    assert compute is primitives._openssl_hmac_sha256
    assert compute(KEY, MESSAGE) == primitives.hmac_sha256(KEY, MESSAGE)


@pytest.mark.parametrize("length", [1, 16, 31, 32])
def test_hkdf_of_one_block_or_less_is_the_prefix_of_a_longer_output(length: int) -> None:
    longer = primitives.hkdf_sha256(b"salt", b"input key material", b"info", 64)
    okm = primitives.hkdf_sha256(b"salt", b"input key material", b"info", length)
    assert okm == longer[:length]
    # RFC 5869 with one block: T(1) = HMAC(PRK, info || 0x01), PRK = HMAC(salt, IKM).
    prk = hmac.digest(b"salt", b"input key material", "sha256")
    assert okm == hmac.digest(prk, b"info\x01", "sha256")[:length]
