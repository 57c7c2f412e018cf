"""The native constant-time crypto this suite runs on is all there (libsodium's XEdDSA
core and OpenSSL's ML-KEM), and losing either one is named."""

import pytest

from custom_components.pacerelle.client.signal import native
from custom_components.pacerelle.client.signal.kem import kyber1024_native


def test_nothing_is_missing_here() -> None:
    assert native.native_crypto_unavailable() is None


def test_a_missing_ml_kem_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "mlkem_unavailable", lambda: "no ML-KEM-1024 in OpenSSL")
    native.native_crypto_unavailable.cache_clear()
    try:
        assert native.native_crypto_unavailable() == "no ML-KEM-1024 in OpenSSL"
    finally:
        native.native_crypto_unavailable.cache_clear()
    assert kyber1024_native.unavailable_reason() is None
