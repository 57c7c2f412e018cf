"""The agent's hand-over marks, in a mapped file of their own outside the agent's folder.

`<marks folder>/pacerelle.handed_over.<agent id>` (in Home Assistant `.storage/`, beside the
generation witness `.storage/pacerelle.generations`): putting the agent's folder back
from an older copy leaves it as it was, so the restored agent still refuses what the newer
state handed over (client/values/handed_over.py). A full restore of Home Assistant's storage puts
it back with the folder: then the marks are as old as the state, a limit written down in
the host's restore detection and the README's "Backups".

Why a mapping: a mark must be on record when its request's event fires, with nothing in
between. The inbox pipeline (client/inbox/pipeline.py) appends it on the event loop right
before the event; a store into a shared mapping is in the kernel's page cache as it is
made, so a killed process keeps it, and no system call runs on the loop (the file is
allocated in full when created: no block is allocated by a store). After a kill the agent
then knows for each request whether its event fired: marked, it did; unmarked, it did not
(its stored copy is handed over at the redelivery). `sync_pending` (msync, in the executor,
before any ACK_READ) makes the marks survive a power cut too.

Layout, little endian: a header of HEADER_BYTES (MAGIC, VERSION, the slots per window, then
for each of the client's two windows, "all" and "trusted", the count of marks ever put in
it) and per window a ring of `slots` marks of 16 bytes. An append stores the mark in its
slot, then the count: a kill between the two leaves the mark uncounted (the window one
shorter), never a torn mark counted. Digests of ciphertexts only, never a message, a key or
an id in clear, so the file is not encrypted (mode 0600). A file that is not of this shape
is reported at warning and read as no marks (started anew); a file that cannot be made,
mapped or synced at error, once (`report`): either weakens the refusal of a restore's
replays and of a kill's redelivery, never refuses or loses a message.

Blocking file work (open, read, create, msync): call those from an executor. `append` is
the one call made on the loop. Only the agent's pipeline appends, and only while it holds
the agent's lock, as every other writer does: nothing writes the file concurrently.
"""

import contextlib
import logging
import mmap
import os
import struct
from pathlib import Path
from typing import Any, Final

from ..limits import MAX_HANDED_OVER, MAX_HANDED_OVER_FILE_BYTES

_LOGGER = logging.getLogger(__name__)

SECTION: Final = "handed_over"  # the agent's document key kept in this file
FILE_MODE: Final = 0o600
MAGIC: Final = b"PCRLHOM\0"
VERSION: Final = 1
WINDOWS: Final = ("all", "trusted")  # client/values/handed_over.py
MARK_BYTES: Final = 16  # inbox/handed_over.MARK_LENGTH hex characters
HEADER: Final = struct.Struct("<8sII")  # magic, version, slots per window
COUNT: Final = struct.Struct("<Q")
HEADER_BYTES: Final = 64


def file_bytes(slots: int) -> int:
    return HEADER_BYTES + len(WINDOWS) * slots * MARK_BYTES


class HandedOverFile:
    """One agent's marks file, mapped while the agent's store is open."""

    def __init__(self, directory: Path, agent_id: str, slots: int = MAX_HANDED_OVER) -> None:
        self.path = directory / f"pacerelle.{SECTION}.{agent_id}"
        self._slots = slots
        self._map: mmap.mmap | None = None
        self._unsynced = False
        self._failed = False  # reported once

    def read(self) -> dict[str, list[str]] | None:
        """The marks kept, oldest first, with the file mapped for `append` (made when
        missing); None without a file (a store older than the marks) or unreadable."""
        self.close()
        slots, marks = self._read() if self.path.exists() else (0, None)
        try:
            if slots != self._slots:  # none, damaged or of another size: made anew
                self._create(marks)
            self._map = self._mapped()
        except OSError as err:
            self.report(err)
        else:
            self._failed = False
        return marks

    def _read(self) -> tuple[int, dict[str, list[str]] | None]:
        """(slots per window, marks) of the file; (0, None) when it is not ours."""
        try:
            with self.path.open("rb") as file:
                content = file.read(MAX_HANDED_OVER_FILE_BYTES + 1)
        except OSError as err:
            _LOGGER.warning("Could not read %s: %s", self.path.name, err.strerror)
            return 0, None
        parsed = parsed_marks(content)
        if parsed is None:
            _LOGGER.warning("%s is not a file of hand-over marks; read as none", self.path.name)
            return 0, None
        return parsed

    def append(self, mark: str, *, trusted: bool) -> None:
        """Keep `mark` (in "all", and in "trusted" too when `trusted`): stores into the
        mapping, no system call; durable against a kill at once (module docstring)."""
        mapping = self._map
        if mapping is None:
            self.report(None)
            return
        raw = bytes.fromhex(mark)
        for window in (0, 1) if trusted else (0,):
            _append(mapping, self._slots, window, raw)
        self._unsynced = True

    def write(self, section: dict[str, Any]) -> None:
        """Replace the marks by `section` (the client's {window: marks}, a whole document
        saved: a restore, a migration), synced; reported (`report`) when it cannot be made."""
        marks = {window: [str(m) for m in section.get(window) or ()] for window in WINDOWS}
        self.close()
        try:
            self._create(marks)
            self._map = self._mapped()
        except OSError as err:
            self.report(err)

    def sync_pending(self) -> None:
        """Make the marks appended so far survive a power cut (msync); reported if not."""
        try:
            if self._unsynced and self._map is not None:
                self._map.flush()
        except OSError as err:
            self.report(err)
        self._unsynced = False

    def close(self) -> None:
        """Unmap (what was stored stays in the page cache and is written back)."""
        if self._map is not None:
            self._map.close()
            self._map = None

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def _mapped(self) -> mmap.mmap:
        fd = os.open(self.path, os.O_RDWR)
        try:
            return mmap.mmap(fd, file_bytes(self._slots), mmap.MAP_SHARED)
        finally:
            os.close(fd)

    def _create(self, marks: dict[str, list[str]] | None) -> None:
        """A new file holding `marks` (the newest of each window), in place by a rename:
        written in full (no holes), synced, then renamed and the folder synced."""
        content = bytearray(file_bytes(self._slots))
        HEADER.pack_into(content, 0, MAGIC, VERSION, self._slots)
        for window, name in enumerate(WINDOWS):
            for mark in (marks or {}).get(name, [])[-self._slots :]:
                _append(content, self._slots, window, bytes.fromhex(mark))
        temporary = self.path.with_name(f"{self.path.name}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            try:
                written = 0
                while written < len(content):
                    written += os.write(fd, content[written:])
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
        _fsync_directory(self.path.parent)

    def report(self, err: OSError | None) -> None:
        """The one message for marks that cannot be kept (once until the file maps again):
        the records are saved all the same, only a restore's or a kill's refusal weakens."""
        if self._failed:
            return
        self._failed = True
        _LOGGER.error(
            "Could not keep the marks of the requests handed over in %s (%s): after a "
            "restore of an older copy of the agent's folder, or a crash, the relay could "
            "have them handed over again",
            self.path.name,
            (err.strerror or err) if err is not None else "not mapped",
        )


def _append(buffer: Any, slots: int, window: int, raw: bytes) -> None:
    """Store `raw` in `window`'s next slot, then count it (a kill between: uncounted)."""
    count_at = HEADER.size + window * COUNT.size
    (count,) = COUNT.unpack_from(buffer, count_at)
    at = HEADER_BYTES + (window * slots + count % slots) * MARK_BYTES
    buffer[at : at + MARK_BYTES] = raw
    COUNT.pack_into(buffer, count_at, count + 1)


def parsed_marks(content: bytes) -> tuple[int, dict[str, list[str]]] | None:
    """The slots per window and the marks of a file's `content`, oldest first; None
    unless it is one of ours."""
    if len(content) < HEADER_BYTES or len(content) > MAX_HANDED_OVER_FILE_BYTES:
        return None
    magic, version, slots = HEADER.unpack_from(content, 0)
    if magic != MAGIC or version != VERSION or not slots or len(content) != file_bytes(slots):
        return None
    marks: dict[str, list[str]] = {}
    for window, name in enumerate(WINDOWS):
        (count,) = COUNT.unpack_from(content, HEADER.size + window * COUNT.size)
        ring = HEADER_BYTES + window * slots * MARK_BYTES
        kept = []
        for number in range(max(0, count - slots), count):
            at = ring + (number % slots) * MARK_BYTES
            kept.append(content[at : at + MARK_BYTES].hex())
        marks[name] = kept
    return slots, marks


def _fsync_directory(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
