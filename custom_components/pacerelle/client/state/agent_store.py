"""One agent's store, owned by the client: its records, its hand-over marks, one writer.

Records (record_store.py) live in `StoreLocation.records`, marks (handed_over_file.py) in
`StoreLocation.marks`, outside the records' folder, so a restore of that folder leaves them as
the newer state wrote them: merged into the document at each load, never held by the records.
A store of an earlier version (`.enc`) is migrated at its first load (versions.py).
Every file operation runs through the host's `run_blocking`, one at a time under the store's
lock, except `mark` (on the loop, no system call: inbox/pipeline.py). `AgentStores` keeps one
AgentStore (one RecordStore, one lock) per agent and location. `pause_writes` holds new commits
until `resume_writes` (a backup copies the database meanwhile), for WRITE_HOLD_SECONDS at most.
"""

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from ..agent_core import BlockingRunner, Bound
from ..values.agent_data import SECTIONS, AgentData, AgentDataError
from .errors import StoreError, StoreProblem
from .handed_over_file import SECTION as HANDED_OVER
from .handed_over_file import HandedOverFile
from .record_store import RecordStore
from .versions import migrate, versioned

_LOGGER = logging.getLogger(__name__)

WRITE_HOLD_SECONDS: Final = 300
"""How long a backup holds the store's commits at most. Home Assistant copies `.storage` in
seconds; a backup not ended after 5 minutes has failed (a crashed Supervisor never sends
`backup/end`), and until then no message is acted on or sent. Past it, commits go on with
the checkpoints held (record_file.py), so the database file a slow backup still copies
stays consistent; the end of the backup, or a restart, lets them run again."""


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the agents' stores live: `records`, the folder of every agent's records;
    `marks`, the folder of each agent's marks file (not inside `records`)."""

    records: Path
    marks: Path


class AgentStore:
    """Load and commit one agent's store (the module docstring); get it from AgentStores."""

    def __init__(self, location: StoreLocation, agent_id: str, run_blocking: BlockingRunner):
        self.agent_id = agent_id
        self.records = RecordStore(location.records, agent_id)
        self._marks = HandedOverFile(location.marks, agent_id)
        self._run = run_blocking
        self._lock = asyncio.Lock()
        self._paused = False
        self._checkpoints_held = False
        self._expiry: asyncio.TimerHandle | None = None
        self._checkpoint_due = False
        self._checkpointing: asyncio.Task[None] | None = None

    async def _locked[T](self, function: Callable[[], T]) -> T:
        async with self._lock:
            return await self._run(function)

    async def exists(self) -> bool:
        return await self._run(self.records.exists)

    async def create(self, document: dict[str, Any]) -> None:
        """Create the store of a new agent; FileExistsError if it already has one."""
        await self._locked(partial(self.records.create, versioned(document)))

    async def load_data(self) -> tuple[dict[str, Any], AgentData | None]:
        """The integration's keys (at STORE_VERSION) and the agent's data; StoreError or
        AgentDataError say what is wrong."""
        return await self._locked(self._load)

    def _load(self) -> tuple[dict[str, Any], AgentData | None]:
        marks = self._marks.read()

        def migrated(document: dict[str, Any]) -> dict[str, Any]:
            document = migrate(document)
            return document if marks is None else {**document, HANDED_OVER: marks}

        return self.records.load(migrated)

    async def load(self) -> dict[str, Any]:
        """The whole document at STORE_VERSION; StoreError says what is wrong."""
        return await self._locked(self._load_document)

    def _load_document(self) -> dict[str, Any]:
        try:
            self._load()
        except AgentDataError as err:
            raise StoreError(StoreProblem.CORRUPT, str(err)) from err
        document = self.records.document()
        marks = document.get(HANDED_OVER)
        if not marks or (isinstance(marks, dict) and not any(marks.values())):
            document.pop(HANDED_OVER, None)  # no marks kept (none, or their file unreadable)
        return document

    async def commit(
        self, extra: dict[str, Any], data: AgentData, bound: Bound | None = None
    ) -> AgentData:
        """Commit `data` (within `bound` first), then make the marks appended so far survive
        a power cut, in one executor job: only what changed is written, in one transaction,
        durable at once; the data committed."""
        committed = await self._locked(partial(self._commit, versioned(extra), data, bound))
        if self._checkpoint_due and self._checkpointing is None:
            self._checkpointing = asyncio.get_running_loop().create_task(self._checkpoint())
        return committed

    def _commit(self, extra: dict[str, Any], data: AgentData, bound: Bound | None) -> AgentData:
        if bound is not None:
            data = bound(data)
        self.records.commit(extra, data)
        self._marks.sync_pending()  # nothing to do unless marks were appended
        self._checkpoint_due = self.records.checkpoint_due()
        return data

    async def _checkpoint(self) -> None:
        """The WAL folded in beside the commits, not under the store's lock (record_file.py):
        the next message does not wait for it."""
        try:
            await self._run(self.records.checkpoint_when_due)
        except (OSError, StoreError, sqlite3.Error):
            _LOGGER.warning("Could not checkpoint the store of agent %s", self.agent_id)
        finally:
            self._checkpointing = None

    def mark(self, mark: str, trusted: bool) -> None:
        """Keep the mark of a request about to be handed over: on the loop, no system call
        (handed_over_file.py), right before its event (inbox/pipeline.py)."""
        self._marks.append(mark, trusted=trusted)

    async def save_keys(self, values: dict[str, Any]) -> None:
        """Change only the integration's keys `values` (the generation, say)."""
        await self._locked(partial(self.records.save_keys, values))

    async def save(self, document: dict[str, Any]) -> None:
        """Replace the whole document (its sections parsed: every record compared); its
        marks, when it has the section, replace those kept."""
        await self._locked(partial(self._save_document, versioned(document)))

    def _save_document(self, document: dict[str, Any]) -> None:
        if not self.records.loaded:
            self._load()
        extra = {key: value for key, value in document.items() if key not in SECTIONS}
        data = AgentData.from_document(document)
        self.records.commit(extra, data)
        if HANDED_OVER in document and data is not None:
            self._marks.write(data.handed_over.to_json())

    async def close(self) -> None:
        """Close the database and release its lock, unmap the marks; the next load reads
        the disk again."""
        await self._locked(self.close_now)

    def close_now(self) -> None:
        """`close` where no executor runs any more (the host is closing)."""
        self.records.close()
        self._marks.close()

    async def remove(self) -> None:
        await self._locked(self._remove)

    def _remove(self) -> None:
        self.records.remove()
        self._marks.remove()

    async def pause_writes(self) -> None:
        """Return once the commit in flight is done, its WAL checkpointed; hold the next
        ones until `resume_writes`, for WRITE_HOLD_SECONDS at most (`_hold_expired`)."""
        if self._paused:
            return
        await self._lock.acquire()
        self._paused = True
        if self._checkpointing is not None:  # one checkpoint at a time
            await asyncio.shield(self._checkpointing)
        try:
            await self._run(self.records.checkpoint)
        except (OSError, StoreError, sqlite3.Error):
            _LOGGER.warning("Could not checkpoint the store of agent %s", self.agent_id)
        loop = asyncio.get_running_loop()
        self._expiry = loop.call_later(WRITE_HOLD_SECONDS, self._hold_expired)

    def _hold_expired(self) -> None:
        """The backup never ended: commits go on, into the WAL only, until it does (the
        database file it may still be copying stays as the checkpoint left it)."""
        _LOGGER.warning(
            "A backup has held the store of agent %s for %d s without ending; its writes go"
            " on, the database file unchanged until the backup ends",
            self.agent_id,
            WRITE_HOLD_SECONDS,
        )
        self._expiry = None
        self.records.hold_checkpoints(True)  # a flag: no file work
        self._checkpoints_held = True
        self._paused = False
        self._lock.release()

    async def resume_writes(self) -> None:
        """The backup ended: the held commits go on (or, past the hold, checkpoints again)."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self._paused:
            self._paused = False
            self._lock.release()
        if self._checkpoints_held:
            self._checkpoints_held = False
            self.records.hold_checkpoints(False)


class AgentStores:
    """The agents' stores in one location: one AgentStore per agent (module docstring)."""

    def __init__(self, location: StoreLocation, run_blocking: BlockingRunner) -> None:
        self.location = location
        self._run = run_blocking
        self._stores: dict[str, AgentStore] = {}

    def get(self, agent_id: str) -> AgentStore:
        store = self._stores.get(agent_id)
        if store is None:
            store = self._stores[agent_id] = AgentStore(self.location, agent_id, self._run)
        return store

    async def pause_writes(self) -> None:
        """Every store paused (AgentStore.pause_writes), until `resume_writes`."""
        for store in list(self._stores.values()):
            await store.pause_writes()

    async def resume_writes(self) -> None:
        for store in list(self._stores.values()):
            await store.resume_writes()

    def close_now(self) -> None:
        """Every store closed (the host is closing, no executor job runs any more)."""
        for store in self._stores.values():
            store.close_now()
