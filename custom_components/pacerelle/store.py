"""The agent's encrypted store inside Home Assistant's configuration directory.

One store per agent in `<config>/.storage/pacerelle/` (see client/encrypted_file.py for the
format): the installation token and the Signal identity live only here, never in
core.config_entries. File work runs in the executor; saves of one agent are serialized.
Home Assistant's backups include `.storage`, so the store and its key are backed up together.
"""

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant

from .client.encrypted_file import EncryptedFile, StoreError, StoreProblem

STORE_DIRECTORY = ("pacerelle",)
STORE_VERSION = 1

# Migrations from version N to N + 1, applied in order when a store is loaded.
type Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}


class AgentStore:
    """Load and save one agent's encrypted document."""

    def __init__(self, hass: HomeAssistant, agent_id: str) -> None:
        self._hass = hass
        directory = Path(hass.config.path(".storage", *STORE_DIRECTORY))
        self._file = EncryptedFile(directory, agent_id)
        self._lock = asyncio.Lock()

    async def async_exists(self) -> bool:
        return await self._hass.async_add_executor_job(self._file.exists)

    async def async_create(self, document: dict[str, Any]) -> None:
        """Create the store of a new agent; FileExistsError if it already has one."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._file.create, _versioned(document))

    async def async_load(self) -> dict[str, Any]:
        """The document at STORE_VERSION; StoreError says what is wrong."""
        async with self._lock:
            document = await self._hass.async_add_executor_job(self._file.read)
        return migrate(document)

    async def async_save(self, document: dict[str, Any]) -> None:
        """Replace the document atomically."""
        async with self._lock:
            await self._hass.async_add_executor_job(self._file.write, _versioned(document))

    async def async_remove(self) -> None:
        async with self._lock:
            await self._hass.async_add_executor_job(self._file.remove)


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
