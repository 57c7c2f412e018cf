"""Whether the native constant-time code that handles long-term secrets is present.

The engine signs (XEdDSA) only through libsodium and decapsulates new Kyber prekeys only
through `cryptography`'s ML-KEM-1024; there is no slow, variable-time fallback for either.
The integration asks here at setup and stays offline with a repair issue if one is missing
(a Python without PyNaCl, or a `cryptography` built on an OpenSSL without ML-KEM).
"""

from functools import cache

from .curve import native_signing_unavailable
from .kem.kyber1024_native import unavailable_reason as mlkem_unavailable


@cache
def native_crypto_unavailable() -> str | None:
    """What is missing, in a few words, or None when everything is there (runs ~1 ms once)."""
    return native_signing_unavailable() or mlkem_unavailable()
