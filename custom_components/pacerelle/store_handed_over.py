"""The agent's hand-over marks, in a file of their own outside the agent's folder.

`.storage/pacerelle.handed_over.<agent id>`, beside the generation witness
(`.storage/pacerelle.generations`): putting the agent's folder `.storage/pacerelle/` back
from an older copy leaves it as it was, so the restored agent still refuses what the newer
state handed over (client/handed_over.py). A full restore of Home Assistant's storage puts
it back with the folder: then the marks are as old as the state, a limit written down in
store_generation.py and the README's "Backups".

A small SQLite database, one row per mark (`window`: "all" or "trusted", the client's two
windows, in the order they were added): digests of ciphertexts, never a message, a key or
an id in clear, so it is not encrypted. A write inserts the marks added and deletes those
pushed out, in one transaction (a few KiB, not the ~80 KB of both windows), written with the
store (store.py) after its commit and in the same executor job, only when the marks
changed. Unsynced (`synchronous=OFF`, a rollback journal) it is durable against a kill at
once and against a power cut at `sync_pending` (the file's and the folder's fsync). An
unreadable file is reported at warning and read as no marks (it is started anew at the next
write), a file that cannot be written at error (store.py: the store's save still succeeds,
its events fire): either weakens the refusal of a restore's replays, never refuses or loses
a message.

Synchronous file I/O: call it from an executor.
"""

import contextlib
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any, Final

_LOGGER = logging.getLogger(__name__)

SECTION: Final = "handed_over"  # the agent's document key kept in this file
FILE_MODE: Final = 0o600
MAX_FILE_BYTES: Final = 1024 * 1024  # a full file holds ~400 KB (client/limits.py)
PAGE_SIZE: Final = 1024  # a hand-over rewrites a page or two of it, and their journal
WINDOWS: Final = ("all", "trusted")  # client/handed_over.py


class HandedOverFile:
    """One agent's marks file."""

    def __init__(self, directory: Path, agent_id: str) -> None:
        self.path = directory / f"pacerelle.{SECTION}.{agent_id}"
        self._written: dict[str, list[str]] | None = None  # as last written or read
        self._unsynced = False

    def read(self) -> dict[str, list[str]] | None:
        """The marks kept; None without a file (a store older than the marks) or unreadable."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        except OSError as err:
            _LOGGER.warning("Could not read %s: %s", self.path.name, err.strerror)
            return None
        try:
            if size > MAX_FILE_BYTES:
                raise sqlite3.DatabaseError(f"{size} bytes")
            with contextlib.closing(self._connect()) as connection:
                rows = connection.execute("SELECT window, mark FROM marks ORDER BY seq").fetchall()
        except sqlite3.Error:
            _LOGGER.warning("%s is not a file of hand-over marks; read as none", self.path.name)
            return None
        marks: dict[str, list[str]] = {window: [] for window in WINDOWS}
        for window, mark in rows:
            if window in marks and isinstance(mark, str):
                marks[window].append(mark)
        self._written = marks
        return marks

    def write(self, section: dict[str, Any], *, sync: bool) -> None:
        """Bring the file to `section` (the client's {window: marks}), unless it is what was
        last written; with `sync` False, durable against a kill only until `sync_pending`.
        OSError when it cannot be written."""
        marks = {window: [str(m) for m in section.get(window) or ()] for window in WINDOWS}
        if marks == self._written:
            return
        try:
            self._write(marks, self._written or self._stored())
        except sqlite3.Error as err:
            raise OSError(f"{self.path.name}: {err}") from err
        self._written = marks
        self._unsynced = True
        if sync:
            self.sync_pending()

    def _stored(self) -> dict[str, list[str]]:
        """What the file holds now; a damaged file is started anew."""
        stored = self.read() if self.path.exists() else None
        if stored is None:
            self.remove()
        return stored or {window: [] for window in WINDOWS}

    def _write(self, marks: dict[str, list[str]], before: dict[str, list[str]]) -> None:
        with contextlib.closing(self._connect()) as connection, connection:
            for window in WINDOWS:
                gone, added = _changes(before.get(window, []), marks[window])
                connection.executemany(
                    "DELETE FROM marks WHERE window = ? AND mark = ?",
                    [(window, mark) for mark in gone],
                )
                connection.executemany(
                    "INSERT INTO marks (window, mark) VALUES (?, ?)",
                    [(window, mark) for mark in added],
                )

    def _connect(self) -> sqlite3.Connection:
        """The database, created with mode 0600 and its table when new."""
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        connection = sqlite3.connect(self.path, isolation_level=None)
        connection.execute("PRAGMA synchronous=OFF")
        connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS marks (seq INTEGER PRIMARY KEY, window TEXT NOT NULL,"
            " mark TEXT NOT NULL, UNIQUE (window, mark))"
        )
        connection.isolation_level = "IMMEDIATE"
        return connection

    def sync_pending(self) -> None:
        """Make the last unsynced write survive a power cut (the file's data, its folder)."""
        if self._unsynced:
            _fsync(self.path)
            _fsync(self.path.parent)
            self._unsynced = False

    def remove(self) -> None:
        for path in (self.path, self.path.with_name(f"{self.path.name}-journal")):
            path.unlink(missing_ok=True)
        self._written = None


def _changes(before: list[str], after: list[str]) -> tuple[list[str], list[str]]:
    """(marks to delete, marks to insert at the newest end) taking `before` to `after`: the
    longest start of `after` found in `before` in order stays, the rest is (re)inserted (a
    mark seen again moved to the newest end)."""
    position = iter(before)
    kept = 0
    for mark in after:
        if not any(mark == earlier for earlier in position):
            break
        kept += 1
    staying = set(after[:kept])
    return [mark for mark in before if mark not in staying], after[kept:]


def _fsync(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
