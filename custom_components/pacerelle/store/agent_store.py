"""The agent's encrypted store inside Home Assistant's configuration directory.

One store per agent in `<config>/.storage/pacerelle/` (client/state/record_file.py for the
format; stores of earlier versions, client/encrypted_file.py, are migrated at their first
load): the installation token and the Signal identity live only here, never in
core.config_entries. File work runs in the executor; commits of one agent are serialized.
Home Assistant's backups include `.storage`, so the store and its key are backed up together.
The document's `handed_over` section (the marks of the last hand-overs) is kept outside
the agent's folder, in its own mapped file (store/handed_over.py): each mark is appended by
the inbox pipeline right before its event (`mark`), a whole document saved replaces them,
and they are merged back when the store is loaded, so a restore of the folder alone leaves
them as the newer state wrote them (the records never hold them; commits never write them).

The document's versions and migrations are the client's (client/state/versions.py).
"""

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from homeassistant.const import EVENT_HOMEASSISTANT_CLOSE
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.util.hass_dict import HassKey

from ..client import (
    SECTIONS,
    STORE_VERSION,
    AgentData,
    AgentDataError,
    RecordStore,
    StoreError,
    StoreProblem,
    migrate,
    versioned,
)
from .handed_over import SECTION as HANDED_OVER
from .handed_over import HandedOverFile

_LOGGER = logging.getLogger(__name__)
_LOCKS: HassKey[dict[str, asyncio.Lock]] = HassKey("pacerelle_store_locks")
_STORES: HassKey[dict[str, RecordStore]] = HassKey("pacerelle_record_stores")
_PAUSED: HassKey[list[asyncio.Lock]] = HassKey("pacerelle_stores_paused")
_MARKS: HassKey[dict[str, HandedOverFile]] = HassKey("pacerelle_handed_over_files")

STORE_DIRECTORY = ("pacerelle",)
__all__ = ["STORE_VERSION", "AgentStore", "migrate"]


class AgentStore:
    """Load and commit one agent's store (client/state/: SQLite records, encrypted rows).

    One RecordStore per agent and Home Assistant, whatever the AgentStore instance (config
    flow, runtime, stop): it holds the store's lock and the last committed data, which the
    next commit is compared with. Closed when Home Assistant closes or the agent is removed.
    """

    def __init__(self, hass: HomeAssistant, agent_id: str) -> None:
        self._hass = hass
        self._records = record_store(hass, agent_id)
        self._marks = _marks_file(hass, agent_id)
        # One lock per agent, whatever the instance: one file operation at a time.
        self._lock = hass.data.setdefault(_LOCKS, {}).setdefault(agent_id, asyncio.Lock())

    async def async_exists(self) -> bool:
        return await self._hass.async_add_executor_job(self._records.exists)

    async def async_create(self, document: dict[str, Any]) -> None:
        """Create the store of a new agent; FileExistsError if it already has one."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._records.create, versioned(document))

    async def async_load_data(self) -> tuple[dict[str, Any], AgentData | None]:
        """The integration's keys (at STORE_VERSION) and the agent's data; StoreError or
        AgentDataError say what is wrong. Migrates an earlier version's `.enc` store."""
        async with self._lock:
            return await self._hass.async_add_executor_job(self._load)

    def _load(self) -> tuple[dict[str, Any], AgentData | None]:
        """The store, with the hand-over marks kept beside it merged in."""
        marks = self._marks.read()

        def migrated(document: dict[str, Any]) -> dict[str, Any]:
            document = migrate(document)
            return document if marks is None else {**document, HANDED_OVER: marks}

        return self._records.load(migrated)

    async def async_load(self) -> dict[str, Any]:
        """The whole document at STORE_VERSION; StoreError says what is wrong."""
        async with self._lock:
            return await self._hass.async_add_executor_job(self._load_document)

    def _load_document(self) -> dict[str, Any]:
        try:
            self._load()
        except AgentDataError as err:
            raise StoreError(StoreProblem.CORRUPT, str(err)) from err
        document = self._records.document()
        marks = document.get(HANDED_OVER)
        if not marks or (isinstance(marks, dict) and not any(marks.values())):
            document.pop(HANDED_OVER, None)  # no marks kept (none, or their file unreadable)
        return document

    async def async_commit(
        self,
        extra: dict[str, Any],
        data: AgentData,
        bound: Callable[[AgentData], AgentData] | None = None,
        sync: bool = True,
    ) -> AgentData:
        """Commit `data` (within `bound` first, in the same executor job): only what
        changed is written, in one transaction, durable at once; the data committed.
        `sync` is the client's (AgentCore.commit): the marks, appended by `mark`, are made
        durable against a power cut by `async_sync`."""
        job = partial(self._commit, versioned(extra), data, bound, sync)
        async with self._lock:
            return await self._hass.async_add_executor_job(job)

    def _commit(
        self,
        extra: dict[str, Any],
        data: AgentData,
        bound: Callable[[AgentData], AgentData] | None,
        sync: bool,
    ) -> AgentData:
        del sync  # every commit is durable; the marks have their own (`async_sync`)
        if bound is not None:
            data = bound(data)
        self._records.commit(extra, data)
        return data

    @callback
    def mark(self, mark: str, trusted: bool) -> None:
        """Keep the mark of a request about to be handed over: on the loop, no system call
        (store/handed_over.py), right before its event (client/inbox/pipeline.py)."""
        self._marks.append(mark, trusted=trusted)

    async def async_save_keys(self, values: dict[str, Any]) -> None:
        """Change only the integration's keys `values` (the generation, say)."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._records.save_keys, values)

    async def async_save(self, document: dict[str, Any]) -> None:
        """Replace the whole document (its sections parsed: every record compared)."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._save_document, versioned(document))

    def _save_document(self, document: dict[str, Any]) -> None:
        if not self._records.loaded:
            self._load()
        extra = {key: value for key, value in document.items() if key not in SECTIONS}
        data = AgentData.from_document(document)
        self._records.commit(extra, data)
        if HANDED_OVER in document and data is not None:
            try:
                self._marks.write(data.handed_over.to_json())
            except OSError as err:  # the records are saved: a restore's refusal weakens
                _marks_failed(err)

    async def async_save_unsynced(self, document: dict[str, Any]) -> None:
        """As `async_save`: every commit is durable against a power cut (record_file.py)."""
        await self.async_save(document)

    async def async_sync(self) -> None:
        """Make the marks appended survive a power cut (the records already do)."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._sync)

    def _sync(self) -> None:
        try:
            self._marks.sync_pending()
        except OSError as err:
            _marks_failed(err)

    async def async_checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (before a backup)."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._records.checkpoint)

    async def async_close(self) -> None:
        """Close the database and release its lock, unmap the marks; the next load reads
        the disk again."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._close)

    def _close(self) -> None:
        self._records.close()
        self._marks.close()

    async def async_remove(self) -> None:
        async with self._lock:
            await self._hass.async_add_executor_job(self._remove)

    def _remove(self) -> None:
        self._records.remove()
        self._marks.remove()


def _marks_failed(err: OSError) -> None:
    _LOGGER.error(
        "Could not save the marks of the requests handed over (%s): after a restore of an "
        "older copy of the agent's folder, the relay could have them handed over again",
        err.strerror or err,
    )


async def async_pause_all(hass: HomeAssistant) -> None:
    """Hold every agent's store (its lock, so no commit runs) with its WAL checkpointed,
    until `async_resume_all` (backup.py)."""
    held = hass.data.setdefault(_PAUSED, [])
    locks = hass.data.setdefault(_LOCKS, {})
    for agent_id, store in list(hass.data.get(_STORES, {}).items()):
        lock = locks.setdefault(agent_id, asyncio.Lock())
        await lock.acquire()
        held.append(lock)
        try:
            await hass.async_add_executor_job(store.checkpoint)
        except (OSError, StoreError, sqlite3.Error):
            _LOGGER.warning("Could not checkpoint the store of agent %s", agent_id)


@callback
def async_resume_all(hass: HomeAssistant) -> None:
    for lock in hass.data.pop(_PAUSED, []):
        lock.release()


def _marks_file(hass: HomeAssistant, agent_id: str) -> HandedOverFile:
    """The agent's one marks file (one mapping, whatever the AgentStore instance)."""
    files = hass.data.setdefault(_MARKS, {})
    file = files.get(agent_id)
    if file is None:
        file = files[agent_id] = HandedOverFile(Path(hass.config.path(".storage")), agent_id)
    return file


def record_store(hass: HomeAssistant, agent_id: str) -> RecordStore:
    stores = hass.data.get(_STORES)
    if stores is None:
        stores = hass.data[_STORES] = {}

        @callback
        def close(_event: Event) -> None:
            for store in stores.values():
                store.close()

        hass.bus.async_listen_once(EVENT_HOMEASSISTANT_CLOSE, close)
    store = stores.get(agent_id)
    if store is None:
        directory = Path(hass.config.path(".storage", *STORE_DIRECTORY))
        store = stores[agent_id] = RecordStore(directory, agent_id)
    return store
