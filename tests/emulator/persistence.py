"""Keeps the state in a JSON file and blobs beside it, each written atomically."""

import json
import os
import tempfile
from pathlib import Path

from .state import EmulatorState


def _write_atomically(path: Path, data: bytes) -> None:
    # A reader (or a restarted emulator) sees the old file or the new one, never half of one.
    # No fsync: surviving a killed process is the point, not a power cut, and fsync after
    # every change would make each message cost milliseconds.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Storage:
    """State and blob storage; in memory only when no state file is given."""

    def __init__(self, state_file: Path | None) -> None:
        self._state_file = state_file
        self._blob_dir = (
            state_file.with_name(state_file.name + ".blobs") if state_file is not None else None
        )
        self._blobs: dict[str, bytes] = {}

    def load(self) -> EmulatorState:
        if self._state_file is None or not self._state_file.exists():
            return EmulatorState()
        return EmulatorState.from_json(json.loads(self._state_file.read_text()))

    def save(self, state: EmulatorState) -> None:
        if self._state_file is None:
            return
        self._state_file.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(state.to_json(), separators=(",", ":")).encode()
        _write_atomically(self._state_file, data)

    def put_blob(self, blob_id: str, data: bytes) -> None:
        if self._blob_dir is None:
            self._blobs[blob_id] = data
            return
        self._blob_dir.mkdir(parents=True, exist_ok=True)
        _write_atomically(self._blob_dir / blob_id, data)

    def get_blob(self, blob_id: str) -> bytes | None:
        if self._blob_dir is None:
            return self._blobs.get(blob_id)
        if not blob_id or "/" in blob_id or blob_id.startswith("."):
            return None
        path = self._blob_dir / blob_id
        return path.read_bytes() if path.is_file() else None
