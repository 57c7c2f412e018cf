"""One agent's records at rest: SQLite (the standard library's), each value AES-256-GCM.

Store directory (0700; files 0600): `<name>.key` (the store key, as encrypted_file.py makes
it), `<name>.db` (records(id, tbl, rkey, seq, value), one b-tree, no index) and `<name>.lock`
(flock by the one process holding the store; the kernel frees it if that process dies).
rkey = HMAC-SHA256(row key, table NUL logical key)[:16], so the file names no one; value =
nonce || AES-256-GCM(JSON), aad = format, agent name, table, rkey, seq: a moved row does not
decrypt. Both keys come from the store key (HKDF-SHA256). WAL with synchronous=FULL, one
transaction per commit: a commit returns once durable, before anything is acknowledged.
`checkpoint_when_due` folds the WAL past 1,000 pages on its own connection; `checkpoint` at
once (before a backup). A new database is built as `<name>.db.partial` and renamed once
complete. Synchronous file I/O: call it from an executor, never from an event loop.
"""

import fcntl
import hmac
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..limits import GCM_NONCE_BYTES, GCM_TAG_BYTES
from .encrypted_file import DIRECTORY_MODE, FILE_MODE, read_key, store_name
from .errors import StoreError, StoreProblem

FORMAT = b"PCRL-rows/1"
ROW_KEY_SIZE = 16
PAGE_SIZE = 2048
"""A commit rewrites one leaf page per changed row (rows are spread by their hashed key):
2 KiB pages halve that against SQLite's 4 KiB, and a big row's overflow chain is written
once. Set when the database is built (page_size takes effect only before the first table)."""
_SCHEMA = (
    "CREATE TABLE records (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, rkey BLOB NOT NULL,"
    " seq INTEGER NOT NULL, value BLOB NOT NULL)",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
)
_PRAGMAS = (
    "PRAGMA synchronous=FULL",
    # Deleted rows' bytes zeroed where that costs no extra write (their pages are written
    # anyway); "on", this build's default, also rewrites freed pages: 4x the bytes per
    # message at the caps for values that are ciphertext anyway.
    "PRAGMA secure_delete=FAST",
    # The WAL file cut back to 4 MiB after a checkpoint, not left at its largest.
    f"PRAGMA journal_size_limit={4 * 1024 * 1024}",
    # No checkpoint inside a commit (SQLite's own runs in the commit that crosses 1,000
    # pages, in that message's path): `checkpoint_when_due` runs them beside the commits.
    "PRAGMA wal_autocheckpoint=0",
)
CHECKPOINT_PAGES = 1000  # the WAL folded in past 1,000 pages, as SQLite's default does
_CHECK = "check"  # a meta row: tells a wrong key (or another agent's store) at once

type Write = tuple[str, str, int, bytes]  # table, logical key, seq, serialized value


def _row_id(rkey: bytes) -> int:
    """The row's SQLite key: two rows meet with odds of 2^-64 per pair, and a row so lost
    is found missing at load (a damaged store), never read as another."""
    return int.from_bytes(rkey[:8], "big", signed=True)


def _derive(key: bytes, purpose: bytes) -> bytes:
    return HKDF(hashes.SHA256(), 32, None, b"pacerelle store " + purpose).derive(key)


class RecordFile:
    """The database of one agent, named `name` inside `directory`."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = store_name(name)
        self.key_path = directory / f"{name}.key"
        self.db_path = directory / f"{name}.db"
        self.partial_path = directory / f"{name}.db.partial"
        self.lock_path = directory / f"{name}.lock"
        self._connection: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._aead: AESGCM | None = None
        self._row_key = b""
        self._aad_prefixes: dict[str, bytes] = {}
        self._mutex = threading.Lock()
        self._checkpointer: sqlite3.Connection | None = None  # checkpoint_when_due's own
        self._checkpoint_mutex = threading.Lock()
        self._checkpoints_held = False

    @property
    def is_open(self) -> bool:
        return self._connection is not None

    def lock(self) -> None:
        """Take the store for this process; StoreError if another process has it open."""
        if self._lock_fd is not None:
            return
        self.directory.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
        os.chmod(self.directory, DIRECTORY_MODE)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(
                StoreProblem.LOCKED, f"{self.db_path.name} is open in another process"
            ) from None
        self._lock_fd = fd

    def open(self) -> None:
        """Open the existing database (locked first); StoreError says what is wrong."""
        self.lock()
        if self._connection is not None:
            return
        self._keys()
        if not self.db_path.is_file():
            raise StoreError(StoreProblem.MISSING, f"{self.db_path.name} is missing")
        connection: sqlite3.Connection | None = None
        try:
            connection = sqlite3.connect(
                self.db_path, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            for pragma in _PRAGMAS:
                connection.execute(pragma)
            check = connection.execute(
                "SELECT value FROM meta WHERE name = ?", (_CHECK,)
            ).fetchone()
        except sqlite3.DatabaseError as err:
            if connection is not None:
                connection.close()
            self.close()  # the lock too: nothing holds a store that did not open
            raise StoreError(
                StoreProblem.CORRUPT, f"{self.db_path.name} is not a Pacerelle store: {err}"
            ) from None
        self._connection = connection
        if check is None:
            self.close()
            raise StoreError(StoreProblem.CORRUPT, f"{self.db_path.name} is not a Pacerelle store")
        try:
            self._decrypt(_CHECK, b"", 0, check[0])
        except StoreError:
            self.close()
            raise

    def build(self, writes: Iterable[Write]) -> None:
        """Write a complete new database under the real name (atomically, see the module)."""
        self.lock()
        self._keys()
        self.partial_path.unlink(missing_ok=True)
        os.close(os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        connection = sqlite3.connect(self.partial_path, isolation_level=None)
        try:
            connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("BEGIN")
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO meta VALUES (?, ?)", (_CHECK, self._encrypt(_CHECK, b"", 0, b"{}"))
            )
            connection.executemany(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?)", self._encrypted(writes)
            )
            connection.execute("COMMIT")
        finally:
            connection.close()
        fd = os.open(self.partial_path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(self.partial_path, self.db_path)
        self.sync_directory()

    def rows(self) -> Iterator[tuple[str, int, Any]]:
        """Every row decrypted: (table, seq, JSON value); StoreError for any that fails."""
        for table, _, seq, plain in self.decrypted_rows():
            try:
                yield table, seq, orjson.loads(plain)
            except orjson.JSONDecodeError:
                raise StoreError(StoreProblem.CORRUPT, "a decrypted row is not JSON") from None

    def decrypted_rows(self) -> Iterator[tuple[str, bytes, int, bytes]]:
        """Every row authenticated and decrypted, not parsed: (table, rkey, seq, JSON
        bytes); StoreError for any that fails (a row damaged, moved, or of another key)."""
        connection = self._open_connection()
        try:
            found = connection.execute("SELECT tbl, rkey, seq, value FROM records").fetchall()
        except sqlite3.DatabaseError as err:
            raise StoreError(StoreProblem.CORRUPT, f"{self.db_path.name}: {err}") from None
        for table, rkey, seq, value in found:
            if not isinstance(table, str) or not isinstance(rkey, bytes) or type(seq) is not int:
                raise StoreError(StoreProblem.CORRUPT, f"{self.db_path.name} has a bad row")
            yield table, rkey, seq, self._decrypt(table, rkey, seq, value)

    def apply(self, writes: Iterable[Write], deletes: Iterable[tuple[str, str]]) -> None:
        """One transaction: every row of the commit or none (then the disk keeps the old)."""
        connection = self._open_connection()
        encrypted = list(self._encrypted(writes))
        gone = [(_row_id(self._rkey(table, key)),) for table, key in deletes]
        with self._mutex:
            self._still_open(connection)
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany("DELETE FROM records WHERE id = ?", gone)
                connection.executemany(
                    "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?)", encrypted
                )
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    def checkpoint(self) -> None:
        """Fold the WAL into the database file (for a backup: one consistent file)."""
        connection = self._open_connection()
        with self._mutex:
            self._still_open(connection)
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def hold_checkpoints(self, held: bool) -> None:
        """Held, commits go to the WAL only and the database file stays as the last
        checkpoint left it (a backup still copying it copies one consistent file; the WAL
        beside it is a valid prefix); released, `checkpoint_when_due` runs again."""
        self._checkpoints_held = held

    def checkpoint_due(self) -> bool:
        """Whether the WAL has grown past CHECKPOINT_PAGES (and checkpoints are not held)."""
        try:
            size = os.stat(self.db_path.with_name(f"{self.db_path.name}-wal")).st_size
        except FileNotFoundError:
            return False
        return not self._checkpoints_held and size > CHECKPOINT_PAGES * PAGE_SIZE

    def checkpoint_when_due(self) -> None:
        """Fold the WAL in on a connection of its own, beside the commits: SQLite lets a
        passive checkpoint run while a commit appends (each frame it copies was committed),
        so no message waits for it. Kill-safe as every SQLite checkpoint is."""
        with self._checkpoint_mutex:
            if not self.checkpoint_due() or self._connection is None:
                return
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(
                    self.db_path, isolation_level=None, check_same_thread=False
                )
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Close the database (SQLite folds the WAL back) and release the lock.

        Under the mutex: a commit or checkpoint running in another thread finishes first
        (SQLite's connection, shared across threads, must not be closed under a statement:
        that crashes the process)."""
        with self._checkpoint_mutex:
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
        with self._mutex:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def remove(self) -> None:
        """Delete the database, its key and lock (the agent is gone)."""
        self.close()
        for suffix in (".db", ".db-wal", ".db-shm", ".db.partial", ".key", ".lock"):
            (self.directory / f"{self.name}{suffix}").unlink(missing_ok=True)

    def _still_open(self, connection: sqlite3.Connection) -> None:
        """Under the mutex: `connection` was not closed meanwhile (the host closing)."""
        if self._connection is not connection:
            raise StoreError(StoreProblem.MISSING, f"{self.db_path.name} was closed")

    def _open_connection(self) -> sqlite3.Connection:
        if self._connection is None:
            self.open()
        assert self._connection is not None
        return self._connection

    def _keys(self) -> None:
        if self._aead is None:
            key = read_key(self.key_path)
            self._aead = AESGCM(_derive(key, b"value"))
            self._row_key = _derive(key, b"row key")

    def row_key(self, table: str, key: str) -> bytes:
        """The row's key on disk (a keyed hash: the file names no Pacerelle id)."""
        return self._rkey(table, key)

    def _rkey(self, table: str, key: str) -> bytes:
        message = table.encode() + b"\0" + key.encode("utf-8", "surrogatepass")
        return hmac.digest(self._row_key, message, "sha256")[:ROW_KEY_SIZE]

    def _aad(self, table: str, rkey: bytes, seq: int) -> bytes:
        """FORMAT NUL name NUL table NUL rkey NUL seq (its start kept per table)."""
        prefix = self._aad_prefixes.get(table)
        if prefix is None:
            prefix = self._aad_prefixes[table] = b"\0".join(
                (FORMAT, self.name.encode(), table.encode(), b"")
            )
        return prefix + rkey + b"\0" + seq.to_bytes(8, "big", signed=True)

    def _encrypted(self, writes: Iterable[Write]) -> Iterator[tuple[int, str, bytes, int, bytes]]:
        for table, key, seq, value in writes:
            rkey = self._rkey(table, key)
            yield _row_id(rkey), table, rkey, seq, self._encrypt(table, rkey, seq, value)

    def _encrypt(self, table: str, rkey: bytes, seq: int, plain: bytes) -> bytes:
        assert self._aead is not None
        nonce = secrets.token_bytes(GCM_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain, self._aad(table, rkey, seq))

    def _decrypt(self, table: str, rkey: bytes, seq: int, value: object) -> bytes:
        assert self._aead is not None
        if not isinstance(value, bytes) or len(value) < GCM_NONCE_BYTES + GCM_TAG_BYTES:
            raise StoreError(StoreProblem.CORRUPT, f"{self.db_path.name} has a bad row")
        try:
            return self._aead.decrypt(
                value[:GCM_NONCE_BYTES], value[GCM_NONCE_BYTES:], self._aad(table, rkey, seq)
            )
        except InvalidTag:
            raise StoreError(
                StoreProblem.UNDECRYPTABLE,
                f"a row of {self.db_path.name} does not decrypt with {self.key_path.name}",
            ) from None
