"""The store document's versions: what each one changed, and the migrations between them.

Versions: 1 named session records by joining ids with ":" (ambiguous when an id holds one);
2 escapes ":" and "%" in them (PeerAddress.storage_name), so names of ids without either,
all that Pacerelle is known to use, stay as they were. A document is brought to
STORE_VERSION when it is loaded (the host's store calls `migrate`); a newer or unknown
version is refused, never read as a guess.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..signal.session import PeerAddress, legacy_addresses
from .errors import StoreError, StoreProblem

_LOGGER = logging.getLogger(__name__)

STORE_VERSION: Final = 2


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


def versioned(document: dict[str, Any]) -> dict[str, Any]:
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
