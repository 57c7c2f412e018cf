"""The agent's encrypted store inside Home Assistant's configuration directory.

One store per agent in `<config>/.storage/pacerelle/` (see client/encrypted_file.py for the
format): the installation token and the Signal identity live only here, never in
core.config_entries. File work runs in the executor; saves of one agent are serialized.
Home Assistant's backups include `.storage`, so the store and its key are backed up together.
The document's `handed_over` section (the marks of the last hand-overs) is kept outside
the agent's folder, in its own file (store_handed_over.py): saved after the store, in the
same job, and merged back when the store is loaded, so a restore of the folder alone
leaves it as the newer state wrote it.

Versions: 1 named session records by joining ids with ":" (ambiguous when an id holds one);
2 escapes ":" and "%" in them (PeerAddress.storage_name), so names of ids without either,
all that Pacerelle is known to use, stay as they were.
"""

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.util.hass_dict import HassKey

from .client import EncryptedFile, PeerAddress, StoreError, StoreProblem, legacy_addresses
from .store_handed_over import SECTION as HANDED_OVER
from .store_handed_over import HandedOverFile

_LOGGER = logging.getLogger(__name__)
_LOCKS: HassKey[dict[str, asyncio.Lock]] = HassKey("pacerelle_store_locks")

STORE_DIRECTORY = ("pacerelle",)
STORE_VERSION = 2


def _escape_session_names(document: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: session records renamed to the escaped storage names.

    A version-1 name whose ids held ":" has several readings: the one whose (person,
    conversation) or else whose conversation the document knows (last devices, requests,
    replies, keys) is taken. A record that stays ambiguous is dropped with a warning rather
    than risk answering one person in another's session; that peer has to start over.
    """
    signal = document.get("signal")
    if not isinstance(signal, dict) or not isinstance(signal.get("sessions"), dict):
        return document
    known = _KnownIds.of(document)
    sessions: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    for name, record in signal["sessions"].items():
        new_name = _escaped_name(str(name), known)
        if new_name is None or new_name in sessions:
            _LOGGER.warning("Dropped session record %s: its peer cannot be told apart", name)
            continue
        sessions[new_name] = record
        renamed[str(name)] = new_name
    migrated = {**signal, "sessions": sessions}
    if isinstance(signal.get("last_used"), dict):
        migrated["last_used"] = {
            renamed[name]: when for name, when in signal["last_used"].items() if name in renamed
        }
    return {**document, "signal": migrated}


def _escaped_name(name: str, known: _KnownIds) -> str | None:
    """The version-2 name of a version-1 record, None if ambiguous; unknown forms unchanged."""
    readings = legacy_addresses(name)
    if not readings:
        return name
    if len(readings) > 1:
        readings = [a for a in readings if known.has_pair(a)] or [
            a for a in readings if a.conversation_id in known.conversations
        ]
    return readings[0].storage_name if len(readings) == 1 else None


@dataclass
class _KnownIds:
    """(person, conversation) pairs and conversation ids that a document mentions."""

    pairs: set[tuple[str, str]] = field(default_factory=set)
    device_keys: set[str] = field(default_factory=set)  # last_devices' "person|conversation"
    conversations: set[str] = field(default_factory=set)

    def has_pair(self, address: PeerAddress) -> bool:
        pair = (address.user_id, address.conversation_id)
        return pair in self.pairs or "|".join(pair) in self.device_keys

    @classmethod
    def of(cls, document: dict[str, Any]) -> _KnownIds:
        known = cls()
        saved = _mapping(document.get("conversations"))
        known.device_keys.update(str(key) for key in _mapping(saved.get("last_devices")))
        known.conversations.update(str(key) for key in _mapping(saved.get("history_keys")))
        conversation = _mapping(document.get("installation")).get("conversation_id")
        if isinstance(conversation, str):
            known.conversations.add(conversation)
        for request in _stored_requests(document):
            user, conversation = request.get("sender_id"), request.get("conversation_id")
            if isinstance(user, str) and isinstance(conversation, str):
                known.pairs.add((user, conversation))
                known.conversations.add(conversation)
        return known


def _stored_requests(document: dict[str, Any]) -> Iterable[dict[str, Any]]:
    inbox = _mapping(document.get("inbox"))
    history = _mapping(document.get("history"))
    items: list[Any] = [*_list(inbox.get("pending"))]
    items += [_mapping(item).get("request") for item in _list(inbox.get("received"))]
    items += [_mapping(item).get("request") for item in _list(history.get("requests"))]
    return [item for item in items if isinstance(item, dict)]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# Migrations from version N to N + 1, applied in order when a store is loaded.
type Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {1: _escape_session_names}


class AgentStore:
    """Load and save one agent's encrypted document."""

    def __init__(self, hass: HomeAssistant, agent_id: str) -> None:
        self._hass = hass
        directory = Path(hass.config.path(".storage", *STORE_DIRECTORY))
        self._file = EncryptedFile(directory, agent_id)
        self._marks = HandedOverFile(directory.parent, agent_id)
        # One lock per agent, whatever the instance (config flow, runtime, stop): a load
        # removes leftover temporary files, which must never be a save's file in flight.
        self._lock = hass.data.setdefault(_LOCKS, {}).setdefault(agent_id, asyncio.Lock())

    async def async_exists(self) -> bool:
        return await self._hass.async_add_executor_job(self._file.exists)

    async def async_create(self, document: dict[str, Any]) -> None:
        """Create the store of a new agent; FileExistsError if it already has one."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._file.create, _versioned(document))

    async def async_load(self) -> dict[str, Any]:
        """The document at STORE_VERSION, with the hand-over marks kept beside it;
        StoreError says what is wrong."""
        async with self._lock:
            document, marks = await self._hass.async_add_executor_job(self._read)
        document = migrate(document)
        return document if marks is None else {**document, HANDED_OVER: marks}

    def _read(self) -> tuple[dict[str, Any], list[Any] | dict[str, Any] | None]:
        return self._file.read(), self._marks.read()

    async def async_save(self, document: dict[str, Any]) -> None:
        """Replace the document atomically."""
        async with self._lock:
            await self._hass.async_add_executor_job(partial(self._write, document, sync=True))

    async def async_save_unsynced(self, document: dict[str, Any]) -> None:
        """Replace the document atomically, durable against a kill; `async_sync` for a
        power cut (encrypted_file.py)."""
        async with self._lock:
            await self._hass.async_add_executor_job(partial(self._write, document, sync=False))

    def _write(self, document: dict[str, Any], *, sync: bool) -> None:
        """The store, then (once its rename is done) the marks, if the document has them."""
        marks = document.get(HANDED_OVER)
        stored = {key: value for key, value in document.items() if key != HANDED_OVER}
        self._file.write(_versioned(stored), sync_directory=sync)
        if isinstance(marks, (list, dict)):
            try:
                self._marks.write(marks, sync=sync)
            except OSError as err:  # the store holds the acceptance: its events must fire
                _marks_failed(err)

    async def async_sync(self) -> None:
        async with self._lock:
            await self._hass.async_add_executor_job(self._sync)

    def _sync(self) -> None:
        self._file.sync_directory()
        try:
            self._marks.sync_pending()
        except OSError as err:
            _marks_failed(err)

    async def async_remove(self) -> None:
        async with self._lock:
            await self._hass.async_add_executor_job(self._remove)

    def _remove(self) -> None:
        self._file.remove()
        self._marks.remove()


def _marks_failed(err: OSError) -> None:
    _LOGGER.error(
        "Could not save the marks of the requests handed over (%s): after a restore of an "
        "older copy of the agent's folder, the relay could have them handed over again",
        err.strerror or err,
    )


def _versioned(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "version": STORE_VERSION}


def migrate(document: dict[str, Any]) -> dict[str, Any]:
    """Bring a loaded document to STORE_VERSION; a newer or unknown version is refused."""
    version = document.get("version")
    if not isinstance(version, int) or version < 1 or version > STORE_VERSION:
        raise StoreError(StoreProblem.CORRUPT, f"unsupported store version {version!r}")
    while version < STORE_VERSION:
        document = MIGRATIONS[version](document)
        version += 1
        document["version"] = version
    return document
