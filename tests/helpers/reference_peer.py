"""The reference Signal peer: Pacerelle's native libsignal runtime, bound with ctypes.

Tests use it as the other side of a conversation to prove byte-for-byte interoperability.
The library is the one shipped in Pacerelle's SDK (`libsignalwrap.so`); it is looked up in
`$PACERELLE_REFERENCE_PEER`, else in `<repo>/.venv/reference-peer/libsignalwrap.so`.
Every buffer the library hands back is released with the library's own free functions.
"""

import base64
import ctypes
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any, Self

LIBRARY_ENV = "PACERELLE_REFERENCE_PEER"
DEFAULT_LIBRARY = Path(__file__).resolve().parents[2] / ".venv/reference-peer/libsignalwrap.so"

# Return codes of the C ABI (0 is success).
NATIVE_ERRORS = {
    -1: "null pointer",
    -2: "Signal protocol error",
    -3: "message deserialize error",
    -4: "invalid input",
}

_Bytes = ctypes.POINTER(ctypes.c_ubyte)


class ReferencePeerError(RuntimeError):
    """A call into the native runtime failed; `code` is the native return code."""

    def __init__(self, operation: str, code: int) -> None:
        super().__init__(f"{operation}: {NATIVE_ERRORS.get(code, 'native error')} ({code})")
        self.operation = operation
        self.code = code


class _NativeBundle(ctypes.Structure):
    _fields_ = (
        ("registration_id", ctypes.c_uint32),
        ("device_id", ctypes.c_uint32),
        ("prekey_id", ctypes.c_uint32),
        ("prekey_public", _Bytes),
        ("prekey_public_len", ctypes.c_size_t),
        ("signed_prekey_id", ctypes.c_uint32),
        ("signed_prekey_public", _Bytes),
        ("signed_prekey_public_len", ctypes.c_size_t),
        ("signed_prekey_signature", _Bytes),
        ("signed_prekey_signature_len", ctypes.c_size_t),
        ("kyber_prekey_id", ctypes.c_uint32),
        ("kyber_prekey_public", _Bytes),
        ("kyber_prekey_public_len", ctypes.c_size_t),
        ("kyber_prekey_signature", _Bytes),
        ("kyber_prekey_signature_len", ctypes.c_size_t),
        ("identity_key", _Bytes),
        ("identity_key_len", ctypes.c_size_t),
    )


@dataclass(frozen=True, slots=True)
class ReferenceBundle:
    """A prekey bundle as the native runtime takes and gives it (serialized keys, raw bytes)."""

    registration_id: int
    device_id: int
    prekey_id: int
    prekey_public: bytes
    signed_prekey_id: int
    signed_prekey_public: bytes
    signed_prekey_signature: bytes
    kyber_prekey_id: int
    kyber_prekey_public: bytes
    kyber_prekey_signature: bytes
    identity_key: bytes

    @classmethod
    def from_published(
        cls, bundle: Mapping[str, Any], one_time_prekey: Mapping[str, Any]
    ) -> ReferenceBundle:
        """The bundle a human's device assembles from Pacerelle's API bodies: the body of
        `PUT /agent/prekey-bundle` and one item of `POST /agent/one-time-prekeys`."""

        def decode(value: str) -> bytes:
            return base64.b64decode(value, validate=True)

        return cls(
            registration_id=bundle["registration_id"],
            device_id=bundle["device_id"],
            prekey_id=one_time_prekey["prekey_id"],
            prekey_public=decode(one_time_prekey["public_key"]),
            signed_prekey_id=bundle["signed_prekey_id"],
            signed_prekey_public=decode(bundle["signed_prekey_public"]),
            signed_prekey_signature=decode(bundle["signed_prekey_signature"]),
            kyber_prekey_id=bundle["kyber_prekey_id"],
            kyber_prekey_public=decode(bundle["kyber_prekey_public"]),
            kyber_prekey_signature=decode(bundle["kyber_prekey_signature"]),
            identity_key=decode(bundle["identity_key"]),
        )


def library_path() -> Path:
    """Where the native runtime is looked up."""
    return Path(os.environ.get(LIBRARY_ENV) or DEFAULT_LIBRARY)


def reference_peer_available() -> bool:
    """Whether the native runtime exists.

    The project's scripts set PACERELLE_REFERENCE_PEER after installing it: then a missing
    library is an error, never a silent skip of every crypto claim. Only a bare pytest run
    outside the scripts may skip.
    """
    if library_path().is_file():
        return True
    if os.environ.get(LIBRARY_ENV):
        raise RuntimeError(f"{LIBRARY_ENV} names {library_path()}, which does not exist")
    return False


@cache
def _library(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    size = ctypes.c_size_t
    out_buf = ctypes.POINTER(_Bytes)
    out_len = ctypes.POINTER(size)
    lib.signal_store_new.argtypes = (_Bytes, size)
    lib.signal_store_new.restype = ctypes.c_void_p
    lib.signal_store_import.argtypes = (_Bytes, size, _Bytes, size)
    lib.signal_store_import.restype = ctypes.c_void_p
    lib.signal_store_free.argtypes = (ctypes.c_void_p,)
    lib.signal_store_free.restype = None
    lib.signal_store_export.argtypes = (ctypes.c_void_p, out_buf, out_len)
    lib.signal_store_export.restype = ctypes.c_int
    lib.signal_store_generate_prekey_bundle.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.POINTER(_NativeBundle),
    )
    lib.signal_store_generate_prekey_bundle.restype = ctypes.c_int
    lib.signal_prekey_bundle_free.argtypes = (ctypes.POINTER(_NativeBundle),)
    lib.signal_prekey_bundle_free.restype = None
    u32 = ctypes.c_uint32
    lib.signal_store_process_prekey_bundle.argtypes = (
        ctypes.c_void_p,
        _Bytes, size,  # remote name
        u32,  # registration id
        u32,  # device id
        u32, _Bytes, size,  # one-time prekey id, public
        u32, _Bytes, size, _Bytes, size,  # signed prekey id, public, signature
        u32, _Bytes, size, _Bytes, size,  # Kyber prekey id, public, signature
        _Bytes, size,  # identity key
    )  # fmt: skip
    lib.signal_store_process_prekey_bundle.restype = ctypes.c_int
    for name in ("signal_store_encrypt", "signal_store_decrypt"):
        fn = getattr(lib, name)
        fn.argtypes = (ctypes.c_void_p, _Bytes, size, _Bytes, size, out_buf, out_len)
        fn.restype = ctypes.c_int
    lib.poc_free_buf.argtypes = (_Bytes, size)
    lib.poc_free_buf.restype = None
    return lib


def _buffer(data: bytes) -> Any:
    """A C copy of `data`, returned as `(pointer, length)` arguments."""
    return (ctypes.c_ubyte * len(data)).from_buffer_copy(data), len(data)


def _read(pointer: Any, length: int) -> bytes:
    if not pointer:
        if length:
            raise ReferencePeerError("read", -1)
        return b""
    return ctypes.string_at(pointer, length)


def _check(operation: str, code: int) -> None:
    if code != 0:
        raise ReferencePeerError(operation, code)


class ReferencePeer:
    """One native libsignal store (identity, prekeys, sessions by remote name)."""

    def __init__(self, name: str, *, _handle: int | None = None) -> None:
        self._lib = _library(library_path())
        self.name = name
        if _handle is None:
            _handle = self._lib.signal_store_new(*_buffer(name.encode()))
        if not _handle:
            raise ReferencePeerError("signal_store_new", -1)
        self._handle: int | None = _handle

    @classmethod
    def from_snapshot(cls, name: str, snapshot: bytes) -> ReferencePeer:
        """A store restored from `export()` output."""
        lib = _library(library_path())
        handle = lib.signal_store_import(*_buffer(name.encode()), *_buffer(snapshot))
        if not handle:
            raise ReferencePeerError("signal_store_import", -1)
        return cls(name, _handle=handle)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Free the native store (idempotent)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.signal_store_free(handle)

    @property
    def _live(self) -> int:
        if not self._handle:
            raise ReferencePeerError("closed store", -1)
        return self._handle

    def generate_prekey_bundle(
        self, prekey_id: int = 1, signed_prekey_id: int = 1, kyber_prekey_id: int = 1
    ) -> ReferenceBundle:
        """New prekeys stored natively, returned as a publishable bundle."""
        raw = _NativeBundle()
        code = self._lib.signal_store_generate_prekey_bundle(
            self._live, prekey_id, signed_prekey_id, kyber_prekey_id, ctypes.byref(raw)
        )
        _check("generate_prekey_bundle", code)
        try:
            return ReferenceBundle(
                registration_id=raw.registration_id,
                device_id=raw.device_id,
                prekey_id=raw.prekey_id,
                prekey_public=_read(raw.prekey_public, raw.prekey_public_len),
                signed_prekey_id=raw.signed_prekey_id,
                signed_prekey_public=_read(raw.signed_prekey_public, raw.signed_prekey_public_len),
                signed_prekey_signature=_read(
                    raw.signed_prekey_signature, raw.signed_prekey_signature_len
                ),
                kyber_prekey_id=raw.kyber_prekey_id,
                kyber_prekey_public=_read(raw.kyber_prekey_public, raw.kyber_prekey_public_len),
                kyber_prekey_signature=_read(
                    raw.kyber_prekey_signature, raw.kyber_prekey_signature_len
                ),
                identity_key=_read(raw.identity_key, raw.identity_key_len),
            )
        finally:
            self._lib.signal_prekey_bundle_free(ctypes.byref(raw))

    def process_prekey_bundle(self, remote_name: str, bundle: ReferenceBundle) -> None:
        """Start a session with `remote_name` from its bundle (verifies its signatures)."""
        code = self._lib.signal_store_process_prekey_bundle(
            self._live,
            *_buffer(remote_name.encode()),
            bundle.registration_id,
            bundle.device_id,
            bundle.prekey_id,
            *_buffer(bundle.prekey_public),
            bundle.signed_prekey_id,
            *_buffer(bundle.signed_prekey_public),
            *_buffer(bundle.signed_prekey_signature),
            bundle.kyber_prekey_id,
            *_buffer(bundle.kyber_prekey_public),
            *_buffer(bundle.kyber_prekey_signature),
            *_buffer(bundle.identity_key),
        )
        _check("process_prekey_bundle", code)

    def encrypt(self, remote_name: str, plaintext: bytes) -> bytes:
        """The framed message for `remote_name`: one type byte, then the libsignal message."""
        return self._crypt("signal_store_encrypt", remote_name, plaintext)

    def decrypt(self, remote_name: str, framed: bytes) -> bytes:
        """The plaintext of a framed message from `remote_name`."""
        return self._crypt("signal_store_decrypt", remote_name, framed)

    def export(self) -> bytes:
        """An opaque snapshot of the whole store, for `from_snapshot`."""
        out = _Bytes()
        out_len = ctypes.c_size_t()
        code = self._lib.signal_store_export(self._live, ctypes.byref(out), ctypes.byref(out_len))
        _check("export", code)
        try:
            return _read(out, out_len.value)
        finally:
            if out:
                self._lib.poc_free_buf(out, out_len.value)

    def _crypt(self, function: str, remote_name: str, data: bytes) -> bytes:
        out = _Bytes()
        out_len = ctypes.c_size_t()
        code = getattr(self._lib, function)(
            self._live,
            *_buffer(remote_name.encode()),
            *_buffer(data),
            ctypes.byref(out),
            ctypes.byref(out_len),
        )
        _check(function.removeprefix("signal_store_"), code)
        try:
            return _read(out, out_len.value)
        finally:
            if out:
                self._lib.poc_free_buf(out, out_len.value)
