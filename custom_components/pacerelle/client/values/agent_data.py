"""Everything the runtime keeps for one agent, and its place in the encrypted store document.

The document's top-level keys written here: "signal" (identity, prekeys, sessions),
"inbox", "history", "checkpoints", "conversations" (history-v1 keys, group keys, last
device per peer), "uncertain_sends", "queued_sends" (values/send_queue.py), "published_prekeys",
"evictions" (what store_bounds.py evicted, counted), "trust" (the trust book: trust/kept.py)
and "handed_over" (the marks of the last hand-overs, which the host keeps outside what a
restore puts back: handed_over.py).
Other keys ("installation", "version") belong to the integration and pass through
untouched. Immutable: the agent builds a new AgentData, saves it, and only then uses it,
so a failed save changes nothing.
"""

import base64
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ErrorKind, PacerelleError
from ..limits import MAX_UNCERTAIN_SENDS
from ..signal.errors import SignalError
from ..signal.state import AgentSignalState
from .checkpoints import Checkpoints
from .evictions import Evictions
from .group_epochs import (
    GroupEpoch,
    advance,
    member_ids,
    opens,
    readers_of,
    sealing_candidates,
)
from .group_key_index import keys_by_group
from .groups import GroupKey
from .handed_over import HandedOver
from .history import History
from .history_v1 import HistoryKey
from .requests import Inbox
from .send_queue import SendQueue
from .trust_book import TrustBook, Unkept, stored_book

SECTIONS = (
    "signal",
    "inbox",
    "history",
    "checkpoints",
    "conversations",
    "uncertain_sends",
    "queued_sends",
    "published_prekeys",
    "evictions",
    "trust",
    "handed_over",
)


class AgentDataError(PacerelleError):
    """The runtime's part of the document is missing pieces or malformed."""

    kind = ErrorKind.STORE


@dataclass(frozen=True, slots=True)
class UncertainSend:
    message_id: str
    conversation_id: str
    at: float


@dataclass(frozen=True, slots=True)
class Conversations:
    """Per-conversation secrets and routing memory."""

    history_keys: Mapping[str, HistoryKey] = field(default_factory=dict)
    # Name -> key, the least recently used first (stored as a list in that order).
    group_keys: Mapping[str, GroupKey] = field(default_factory=dict)
    # "user|conversation" -> the device that person last wrote from, the most recent last
    # (bounded by store_bounds.py, the least recent first).
    last_devices: Mapping[str, str] = field(default_factory=dict)
    # Conversation -> the group's current epoch (group_epochs.py); absent for a group
    # whose keys came before it was kept: derived from its keys until the next ones come.
    group_epochs: Mapping[str, GroupEpoch] = field(default_factory=dict)
    # Conversation -> the `to` that reaches all of it, for each conversation the host named
    # (a Home Assistant subentry): kept as long as it is named, whatever else rolls off.
    named: Mapping[str, str] = field(default_factory=dict)

    def keys_of(self, conversation_id: str) -> tuple[GroupKey, ...]:
        """The held keys of the group, the least recently used first."""
        return keys_by_group(self.group_keys).get(conversation_id, ())

    def with_history_key(self, conversation_id: str, key: HistoryKey) -> Conversations:
        return replace(self, history_keys={**self.history_keys, conversation_id: key})

    def with_group_key(self, key: GroupKey) -> Conversations:
        """With `key` learned: the most recently used (group_key_bounds.py evicts the least)."""
        name = key.name
        if name not in self.group_keys:
            return replace(self, group_keys={**self.group_keys, name: key})
        keys = dict(self.group_keys)
        del keys[name]  # re-inserted last
        keys[name] = key
        return replace(self, group_keys=keys)

    def with_group_key_used(self, name: str) -> Conversations:
        """With the key `name` (which opened or sealed a message) the most recently used."""
        key = self.group_keys.get(name)
        if key is None or list(self.group_keys)[-1] == name:
            return self
        return self.with_group_key(key)

    def with_device(self, user_id: str, conversation_id: str, device_id: str) -> Conversations:
        name = device_key(user_id, conversation_id)
        if self.last_devices.get(name) == device_id and list(self.last_devices)[-1] == name:
            return self
        last_devices = {k: v for k, v in self.last_devices.items() if k != name}
        last_devices[name] = device_id
        return replace(self, last_devices=last_devices)

    def group_epoch(self, conversation_id: str) -> GroupEpoch | None:
        """The group's current epoch (group_epochs.py); None when no key of it is held."""
        stored = self.group_epochs.get(conversation_id)
        if stored is not None:
            return stored
        return advance(None, self.keys_of(conversation_id), conversation_id)

    def with_group_keys_learned(
        self, conversation_id: str, learned: Iterable[str]
    ) -> Conversations:
        """With the group's epoch moved on by the keys just `learned` (group_epochs.py)."""
        epoch = advance(
            self.group_epochs.get(conversation_id),
            self.group_keys.values(),
            conversation_id,
            frozenset(learned),
        )
        epochs = {cid: held for cid, held in self.group_epochs.items() if cid != conversation_id}
        if epoch is not None:
            epochs[conversation_id] = epoch
        return replace(self, group_epochs=epochs)

    def opens_with(self, name: str) -> bool:
        """Whether the key `name` is held and may open a message (group_epochs.py rule 4)."""
        key = self.group_keys.get(name)
        return key is not None and opens(self.group_epoch(key.conversation_id), key)

    def group_members(self, conversation_id: str, agent_id: str) -> frozenset[str]:
        """The group's members now (group_epochs.py); empty when no key of it is held."""
        keys = self.keys_of(conversation_id)
        return member_ids(self.group_epoch(conversation_id), keys, agent_id)  # group_members

    def sealing_group_key(
        self, conversation_id: str, allowed: Callable[[GroupKey], bool] | None = None
    ) -> GroupKey | None:
        """The key to seal with: of the group's current epoch, from one of its members
        (group_epochs.py rule 5), of those `allowed` when given; the least recently used
        first, as before."""
        keys = self.keys_of(conversation_id)
        candidates = sealing_candidates(self.group_epoch(conversation_id), keys)
        return next((k for k in candidates if allowed is None or allowed(k)), None)

    def group_readers(self, key: GroupKey) -> list[GroupKey]:
        """The held keys of the members who read what `key` seals (group_epochs.readers_of)."""
        held = self.keys_of(key.conversation_id)
        return readers_of(self.group_epoch(key.conversation_id), held, key)

    def current_readers(self, conversation_id: str) -> list[GroupKey]:
        """The held keys of the group's members of now: who reads what is sealed now."""
        keys = self.keys_of(conversation_id)
        return sealing_candidates(self.group_epoch(conversation_id), keys)

    def holds_group_key(self, conversation_id: str) -> bool:
        return bool(self.keys_of(conversation_id))

    def within_held_groups(self) -> Conversations:
        """Without the epochs of groups whose keys all went (store_bounds.py)."""
        held = {key.conversation_id for key in self.group_keys.values()}
        if held >= self.group_epochs.keys():
            return self
        kept = {cid: epoch for cid, epoch in self.group_epochs.items() if cid in held}
        return replace(self, group_epochs=kept)

    def to_json(self) -> dict[str, Any]:
        return {
            "history_keys": {cid: key.to_json() for cid, key in self.history_keys.items()},
            "group_keys": [key.to_json() for key in self.group_keys.values()],
            "last_devices": dict(self.last_devices),
            "group_epochs": {cid: epoch.to_json() for cid, epoch in self.group_epochs.items()},
            "named": dict(self.named),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Conversations:
        group_keys = [GroupKey.from_json(item) for item in data["group_keys"]]
        return cls(
            {cid: HistoryKey.from_json(key) for cid, key in data["history_keys"].items()},
            {key.name: key for key in group_keys},
            {str(k): str(v) for k, v in data["last_devices"].items()},
            # Absent in stores written before it was kept: derived (group_epochs.py).
            {
                str(cid): GroupEpoch.from_json(epoch)
                for cid, epoch in (data.get("group_epochs") or {}).items()
            },
            # Absent in stores written before conversations were named in the store.
            {str(cid): str(to) for cid, to in (data.get("named") or {}).items()},
        )


def device_key(user_id: str, conversation_id: str) -> str:
    """The last-device map's key: one per (person, conversation), never shared.

    "%" and "|" are percent-escaped in the ids, so that ("a|b", "c") and ("a", "b|c") no
    longer meet in "a|b|c"; ids without them (all seen so far) keep the key stores hold.
    """
    return f"{_escape_key_part(user_id)}|{_escape_key_part(conversation_id)}"


def _escape_key_part(part: str) -> str:
    return part.replace("%", "%25").replace("|", "%7C")


@dataclass(frozen=True, slots=True)
class AgentData:
    signal: AgentSignalState
    inbox: Inbox = field(default_factory=Inbox)
    history: History = field(default_factory=History)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    conversations: Conversations = field(default_factory=Conversations)
    uncertain: tuple[UncertainSend, ...] = ()
    # One-time prekey ids already sent to the relay: never published twice, since the
    # relay may have handed one out whose first message has not arrived yet.
    published_prekeys: frozenset[int] = frozenset()
    evictions: Evictions = field(default_factory=Evictions)
    # Sends made while offline, sealed, waiting for the gateway (values/send_queue.py).
    queued: SendQueue = field(default_factory=SendQueue)
    # Marks of what was handed over, kept by the host outside the restorable store.
    handed_over: HandedOver = field(default_factory=HandedOver)
    # Who the agent trusts (values/trust_book.py), or why a stored agent has no book of its own
    # (trust/kept.py decides the one it starts with). The agent's core commits its door's.
    trust: TrustBook | Unkept = field(default_factory=TrustBook)

    def counted(self, **counts: int) -> AgentData:
        """This data with eviction counters increased (see store_bounds.py)."""
        return replace(self, evictions=self.evictions.added(**counts))

    def with_uncertain(self, sends: list[UncertainSend]) -> AgentData:
        return replace(self, uncertain=(*self.uncertain, *sends)[-MAX_UNCERTAIN_SENDS:])

    def sections(self) -> dict[str, Any]:
        """The runtime's top-level document keys (fresh objects: safe to hand to a thread)."""
        return {
            "signal": self.signal.to_json(),
            "inbox": self.inbox.to_json(),
            "history": self.history.to_json(),
            "checkpoints": self.checkpoints.to_json(),
            "conversations": self.conversations.to_json(),
            "uncertain_sends": [
                {"message_id": s.message_id, "conversation_id": s.conversation_id, "at": s.at}
                for s in self.uncertain
            ],
            "published_prekeys": sorted(self.published_prekeys),
            "evictions": self.evictions.to_json(),
            "queued_sends": self.queued.to_json(),
            "trust": (
                self.trust.to_json() if isinstance(self.trust, TrustBook) else self.trust.value
            ),
            "handed_over": self.handed_over.to_json(),
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> AgentData | None:
        """The saved data; None for a store that never held an identity (a new agent)."""
        if "signal" not in document:
            if any(name in document for name in SECTIONS):
                raise AgentDataError("the store has runtime data but no Signal identity")
            return None
        try:
            return cls(
                signal=AgentSignalState.from_json(document["signal"]),
                inbox=Inbox.from_json(document["inbox"]),
                history=History.from_json(document["history"]),
                checkpoints=Checkpoints.from_json(document["checkpoints"]),
                conversations=Conversations.from_json(document["conversations"]),
                uncertain=tuple(
                    UncertainSend(str(s["message_id"]), str(s["conversation_id"]), float(s["at"]))
                    for s in document["uncertain_sends"]
                ),
                published_prekeys=frozenset(int(i) for i in document.get("published_prekeys", ())),
                # Absent from stores written before the store was bounded.
                evictions=Evictions.from_json(document.get("evictions") or {}),
                # Absent from stores written before sends could be queued.
                queued=SendQueue.from_json(document.get("queued_sends") or []),
                # Absent before hand-overs were marked, or without the host's file.
                handed_over=HandedOver.from_json(document.get("handed_over")),
                # Absent before the book moved into the store; unreadable: lost (kept.py).
                trust=stored_book(document.get("trust")),
            )
        except (
            SignalError,
            PacerelleError,
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
        ) as err:
            raise AgentDataError(f"runtime data: {type(err).__name__}: {err}") from err


def identity_fingerprint(data: AgentData) -> str:
    """The identity key in base64 (public): lets tests and diagnostics tell identities apart."""
    return base64.b64encode(data.signal.prekeys.identity_key).decode()
