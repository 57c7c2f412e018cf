"""The agent's hand-over marks, in a file of their own outside the agent's folder.

`.storage/pacerelle.handed_over.<agent id>`, beside the generation witness
(`.storage/pacerelle.generations`): putting the agent's folder `.storage/pacerelle/` back
from an older copy leaves it as it was, so the restored agent still refuses what the newer
state handed over (client/handed_over.py). A full restore of Home Assistant's storage puts
it back with the folder: then the marks are as old as the state, a limit written down in
store_generation.py and the README's "Backups".

JSON `{"version": 1, "marks": ...}`, the client's section as it is (`{"all": [...],
"trusted": [...]}`, a plain list before trusted marks were kept apart): digests of
ciphertexts, never a message, a key or an id in clear. Written with the store (store.py),
after its rename and in the same executor job, only when the marks changed: a temporary
file, a rename, and the file's and the folder's fsync with the store's own (at once, or at
`sync` for an unsynced save). An unreadable file is reported at warning and read as no
marks, a file that cannot be written at error (store.py: the store's save still succeeds,
its events fire): either weakens the refusal of a restore's replays, never refuses or loses
a message.

Synchronous file I/O: call it from an executor.
"""

import contextlib
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Any, Final

import orjson

_LOGGER = logging.getLogger(__name__)

SECTION: Final = "handed_over"  # the agent's document key kept in this file
FORMAT: Final = 1
FILE_MODE: Final = 0o600
MAX_FILE_BYTES: Final = 1024 * 1024  # ~70 KB written at most (client/limits.py)


class HandedOverFile:
    """One agent's marks file."""

    def __init__(self, directory: Path, agent_id: str) -> None:
        self.path = directory / f"pacerelle.{SECTION}.{agent_id}"
        self._written: list[Any] | dict[str, Any] | None = (
            None  # what this instance last wrote or read
        )
        self._unsynced = False

    def read(self) -> list[Any] | dict[str, Any] | None:
        """The marks kept; None without a file (a store older than the marks) or unreadable."""
        try:
            with self.path.open("rb") as file:
                raw = file.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as err:
            _LOGGER.warning("Could not read %s: %s", self.path.name, err.strerror)
            return None
        try:
            value = json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
        except ValueError:
            value = None
        if not isinstance(value, dict) or value.get("version") != FORMAT:
            value = {}
        marks = value.get("marks")
        if not isinstance(marks, (list, dict)):
            _LOGGER.warning("%s is not a file of hand-over marks; read as none", self.path.name)
            return None
        self._written = marks
        return marks

    def write(self, marks: list[Any] | dict[str, Any], *, sync: bool) -> None:
        """Replace the marks atomically, unless they are what was last written; with
        `sync` False, durable against a kill only until `sync_pending`."""
        if marks == self._written:
            return
        body = orjson.dumps({"version": FORMAT, "marks": marks})  # ~0.1 ms for the most
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
                if sync:
                    out.flush()
                    os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        self._written = marks
        if sync:
            _fsync(self.path.parent)
        self._unsynced = not sync

    def sync_pending(self) -> None:
        """Make the last unsynced write survive a power cut (the file's data, its folder)."""
        if self._unsynced:
            _fsync(self.path)
            _fsync(self.path.parent)
            self._unsynced = False

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self._written = None


def _fsync(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
