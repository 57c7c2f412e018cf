"""One agent's store: the records of its data in SQLite, written by difference.

`load` reads every row, assembles the document and parses it once (AgentData.from_document);
`commit` writes, in one transaction, only the rows whose object changed since the last
commit or load (records.py), and only then takes the new data as its baseline: a failed
write leaves the disk and the baseline as they were, so the caller's old data stays true.
A load writes nothing, except once: the migration from the `.enc` file of earlier
versions, built beside and renamed in place complete (record_file.py), the `.enc` file
deleted only after that; a kill at any point leaves one complete store, old or new.
Synchronous: call it from an executor.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..values.agent_data import SECTIONS, AgentData
from .assembly import baseline, document_of, loaded_rows
from .encrypted_file import EncryptedFile, create_key, read_key
from .errors import StoreError, StoreProblem
from .record_file import RecordFile
from .records import Records, encoded_rows

type Migrate = Callable[[dict[str, Any]], dict[str, Any]]


def _split(document: Mapping[str, Any]) -> tuple[dict[str, Any], AgentData | None]:
    extra = {key: value for key, value in document.items() if key not in SECTIONS}
    return extra, AgentData.from_document(document)


class RecordStore:
    """Load and commit one agent's data (see the module docstring)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.file = RecordFile(directory, name)
        self.legacy = EncryptedFile(directory, name)
        self._records = Records()
        self.extra: dict[str, Any] = {}
        self.data: AgentData | None = None
        self.loaded = False

    def exists(self) -> bool:
        """Whether a store (or its key, or an earlier version's file) is present."""
        return self.file.db_path.exists() or self.legacy.exists()

    def create(self, extra: Mapping[str, Any]) -> None:
        """Make the key and the first store; FileExistsError if a key is there already."""
        self.file.lock()
        create_key(self.file.key_path)
        self._build(dict(extra), None)

    def load(self, migrate: Migrate) -> tuple[dict[str, Any], AgentData | None]:
        """The integration's keys and the data; StoreError (or AgentDataError) if damaged.

        `migrate` brings an earlier version's document up to date (the integration's rule).
        A failed load holds nothing (the lock released): the next one starts over.
        """
        try:
            return self._load(migrate)
        except BaseException:
            if not self.loaded:
                self.file.close()
            raise

    def _load(self, migrate: Migrate) -> tuple[dict[str, Any], AgentData | None]:
        self.file.lock()
        if not self.file.db_path.exists():
            self.file.partial_path.unlink(missing_ok=True)  # a build killed half-way
            if not self.legacy.data_path.exists():
                read_key(self.file.key_path)  # KEY_MISSING before MISSING, as before
                raise StoreError(StoreProblem.MISSING, f"{self.file.db_path.name} is missing")
            extra, data = _split(migrate(self.legacy.read()))
            self._build(extra, data)
        self.legacy.data_path.unlink(missing_ok=True)  # migrated: the new store is complete
        self.legacy.remove_stale_temporaries()
        if not self.loaded:
            self.file.open()
            loaded = loaded_rows(self.file.decrypted_rows(), self.file.row_key)
            extra, data = _split(migrate(document_of(loaded)))
            self._records = baseline(loaded, extra, data)
            self.extra, self.data, self.loaded = extra, data, True
        return dict(self.extra), self.data

    def document(self) -> dict[str, Any]:
        """The whole document, as earlier versions stored it (tests, the stop's load)."""
        if self.data is None:
            return dict(self.extra)
        return {**self.extra, **self.data.sections()}

    def commit(self, extra: Mapping[str, Any], data: AgentData | None) -> int:
        """Write what changed since the baseline, in one transaction; the rows written."""
        if not self.loaded:
            raise StoreError(StoreProblem.MISSING, "the store was not loaded")
        extra = dict(extra)
        changes = self._records.changes(extra, data)
        if changes:
            self.file.apply(encoded_rows(changes), changes.deletes)
        self._records.adopt(changes, data)
        self.extra, self.data = extra, data
        return len(changes.writes) + len(changes.deletes)

    def save_keys(self, values: Mapping[str, Any]) -> None:
        """Only the integration's keys `values` changed (the generation, say)."""
        self.commit({**self.extra, **values}, self.data)

    def checkpoint(self) -> None:
        if self.file.is_open:
            self.file.checkpoint()

    def hold_checkpoints(self, held: bool) -> None:
        self.file.hold_checkpoints(held)

    def checkpoint_due(self) -> bool:
        return self.file.is_open and self.file.checkpoint_due()

    def checkpoint_when_due(self) -> None:
        self.file.checkpoint_when_due()

    def close(self) -> None:
        self.file.close()
        self.loaded = False

    def remove(self) -> None:
        """Delete everything of this agent's store, earlier versions' files included."""
        self.file.remove()
        self.legacy.remove()
        self.loaded = False

    def _build(self, extra: dict[str, Any], data: AgentData | None) -> None:
        records = Records()
        changes = records.changes(extra, data)
        self.file.build(encoded_rows(changes))
