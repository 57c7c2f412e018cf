"""The agent's hand-over marks, in a mapped file of their own outside the agent's folder.

`<marks folder>/pacerelle.handed_over.<agent id>` (in `.storage/`): a restore of the agent's
folder leaves it, so the restored agent still refuses what the newer state handed over
(client/values/handed_over.py); a full restore of `.storage/` takes it back too (README
"Backups"). A store into a shared mapping survives a killed process and makes no system call,
so `append` runs on the loop right before the event (inbox/pipeline.py); `sync_pending` (msync,
in the executor, before any ACK_READ) makes marks survive a power cut. Layout: a header
(MAGIC, VERSION, slots, per window "all" and "trusted" the count of marks) and per window a
ring of 16-byte marks; the mark is stored before its count, so a kill never counts a torn mark.
Digests only, never clear data (mode 0600, unencrypted). A malformed or unusable file is
reported once and read as no marks: that weakens replay refusal, never loses a message.
Everything but `append` is blocking; only the pipeline appends, under the agent's lock.
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
