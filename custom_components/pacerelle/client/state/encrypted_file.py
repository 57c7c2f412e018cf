"""The agent's state as earlier versions kept it: an AES-256-GCM encrypted JSON file and its key.

Read once, to migrate it to the per-record store (client/state/); its key (`create_key`,
`read_key`) is the new store's key. Layout (directory 0700, files 0600):
    <name>.key   32 random bytes, base64, made once with the store
    <name>.enc   MAGIC || FORMAT || 12-byte nonce || AES-256-GCM(JSON document)
The header and the store's name are associated data: a renamed or edited file does not
decrypt. Writes are atomic (temporary file, fsync, rename, directory fsync). Reading refuses a
file over MAX_DOCUMENT_BYTES and writing refuses to produce one (DocumentTooLargeError, before
touching the disk). Reading removes this store's leftover `.<name>.<8 hex>.tmp` files only.
orjson is used when it takes the document, else the standard library; both stay within the
bounds' size estimates (inbox.stored_size). Synchronous file I/O: call it from an executor.
"""

import base64
import binascii
import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..limits import GCM_NONCE_BYTES, GCM_TAG_BYTES, MAX_DOCUMENT_BYTES
from .errors import DocumentTooLargeError, StoreError, StoreProblem

MAGIC = b"PCRL"
FORMAT = 1
KEY_SIZE = 32
DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
_TEMPORARY_SUFFIX = re.compile(r"\.[0-9a-f]{8}\.tmp")


def store_name(name: str) -> str:
    """`name` as a store's file name inside its folder (both formats): never empty, hidden
    or a path; ValueError otherwise."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"invalid store name {name!r}")
    return name


class EncryptedFile:
    """The encrypted document of one agent, named `name` inside `directory`."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = store_name(name)
        self.key_path = directory / f"{name}.key"
        self.data_path = directory / f"{name}.enc"

    def exists(self) -> bool:
        """Whether a document (or its key) is present: then creating anew is refused."""
        return self.data_path.exists() or self.key_path.exists()

    def create(self, document: dict[str, Any]) -> None:
        """Make the key and write the first document; refuses to overwrite anything."""
        self._ensure_directory()
        self._write(create_key(self.key_path), document)

    def read(self) -> dict[str, Any]:
        """The decrypted document; StoreError says precisely what is wrong.

        Leftovers of writes killed half-way are removed first (see the module's docstring).
        """
        self.remove_stale_temporaries()
        key = self._read_key()
        try:
            blob = self.data_path.read_bytes()
        except FileNotFoundError:
            raise StoreError(StoreProblem.MISSING, f"{self.data_path.name} is missing") from None
        header = self._header()
        name = self.data_path.name
        if len(blob) > MAX_DOCUMENT_BYTES or not blob.startswith(MAGIC):
            raise StoreError(StoreProblem.CORRUPT, f"{name} is not a Pacerelle store")
        if not blob.startswith(header) or len(blob) < len(header) + GCM_NONCE_BYTES + GCM_TAG_BYTES:
            raise StoreError(StoreProblem.CORRUPT, f"{name} has an unknown format")
        nonce = blob[len(header) : len(header) + GCM_NONCE_BYTES]
        try:
            plain = AESGCM(key).decrypt(nonce, blob[len(header) + GCM_NONCE_BYTES :], self._aad())
        except InvalidTag:
            raise StoreError(
                StoreProblem.UNDECRYPTABLE,
                f"{self.data_path.name} does not decrypt with {self.key_path.name}",
            ) from None
        try:
            document = json.loads(plain)
        except ValueError:
            raise StoreError(StoreProblem.CORRUPT, "the decrypted document is not JSON") from None
        if not isinstance(document, dict):
            raise StoreError(StoreProblem.CORRUPT, "the decrypted document is not an object")
        return document

    def write(self, document: dict[str, Any], *, sync_directory: bool = True) -> None:
        """Replace the document atomically (the key must exist).

        Without `sync_directory`, the new document survives a killed process (the rename is
        done) but not yet a power cut: call `sync_directory` for that, before anything that
        relies on it reaches the outside (inbox/pipeline.py: events first, ACK_READ after).
        """
        self._write(self._read_key(), document, sync_directory=sync_directory)

    def sync_directory(self) -> None:
        """Make the last rename durable (fsync of the directory)."""
        directory_fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory_fd)
        finally:
            os.close(directory_fd)

    def remove_stale_temporaries(self) -> list[str]:
        """Delete this store's temporary files (a write killed half-way); their names.

        Only `.<name>.<8 hex>.tmp` of this store's name, only regular files (lstat: a link
        with such a name is left alone, and nothing is followed). Call it when no write of
        this store can be under way (at load: saves are serialized after it).
        """
        prefix = f".{self.name}"
        removed: list[str] = []
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return removed
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or not _TEMPORARY_SUFFIX.fullmatch(name[len(prefix) :]):
                continue
            try:
                if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                    continue
                os.unlink(entry.path)
            except FileNotFoundError:
                continue
            removed.append(name)
        return removed

    def remove(self) -> None:
        """Delete the document and its key (the agent is gone)."""
        for path in (self.data_path, self.key_path):
            path.unlink(missing_ok=True)

    def _ensure_directory(self) -> None:
        self.directory.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
        os.chmod(self.directory, DIRECTORY_MODE)

    def _header(self) -> bytes:
        return MAGIC + bytes([FORMAT])

    def _aad(self) -> bytes:
        return self._header() + self.name.encode()

    def _read_key(self) -> bytes:
        return read_key(self.key_path)

    def _write(self, key: bytes, document: dict[str, Any], *, sync_directory: bool = True) -> None:
        self._ensure_directory()
        nonce = secrets.token_bytes(GCM_NONCE_BYTES)
        plain = _serialized(document)
        size = len(self._header()) + GCM_NONCE_BYTES + len(plain) + GCM_TAG_BYTES
        if size > MAX_DOCUMENT_BYTES:
            raise DocumentTooLargeError(size, MAX_DOCUMENT_BYTES)
        blob = self._header() + nonce + AESGCM(key).encrypt(nonce, plain, self._aad())
        temporary = self.directory / f".{self.name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.data_path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        if sync_directory:
            self.sync_directory()


def create_key(path: Path) -> bytes:
    """Make a store's key file (never over an existing one: O_EXCL); the key."""
    key = secrets.token_bytes(KEY_SIZE)
    # O_EXCL: two flows racing for the same agent cannot both create a key.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        out.write(base64.b64encode(key))
        out.flush()
        os.fsync(out.fileno())
    return key


def read_key(path: Path) -> bytes:
    """A store's key; StoreError (KEY_MISSING, CORRUPT) says what is wrong."""
    try:
        encoded = path.read_bytes()
    except FileNotFoundError:
        raise StoreError(StoreProblem.KEY_MISSING, f"{path.name} is missing") from None
    try:
        key = base64.b64decode(encoded.strip(), validate=True)
    except binascii.Error:
        key = b""
    if len(key) != KEY_SIZE:
        raise StoreError(StoreProblem.CORRUPT, f"{path.name} is not a store key")
    return key


def _serialized(document: dict[str, Any]) -> bytes:
    """Compact JSON of `document` (see the module's docstring)."""
    try:
        return orjson.dumps(document)
    except TypeError:  # JSONEncodeError: what orjson refuses (non-str keys, huge ints...)
        return json.dumps(document, separators=(",", ":")).encode()
