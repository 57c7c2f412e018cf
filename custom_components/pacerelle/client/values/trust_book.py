"""Who the agent trusts: a state per (person, device, identity key), as Signal users know it.

The relay can announce devices and keys at will, so a key is believed only once the user
compared its code, or on the owner's first use. `TrustBook.observe`: a device with its recorded
key keeps its state; a key already trusted for the person is trusted; the owner's first device
is trusted on first use unless `first_use` is spent (kept.py); any other new device or key is
unverified (group members too); a trusted device with a new key is `changed`; a blocked device
stays blocked under any key, and a blocked key under every device id of that person unless the
user decided otherwise for that device and key. `readable` is the same rule without first use
(trust/door.py). A decision binds to the key shown (`TrustBook.decided`). Immutable.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from ..errors import ErrorKind, PacerelleError
from ..limits import MAX_TRUST_RECORDS
from ..signal.identity import verification_code
from ..signal.session import address_of
from ..signal.state import AgentSignalState

# A relay inventing devices must not grow the book without end: the least recently seen
# undecided records go first (a forgotten device is simply unverified again when it comes
# back); trusted and blocked ones only when nothing else is left, so a flood of invented
# devices can neither erase a decision nor reopen the owner's trust on first use.


class TrustState(StrEnum):
    TRUSTED = "trusted"
    UNVERIFIED = "unverified"
    CHANGED = "changed"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class DeviceTrust:
    """One device of one person, the identity key it last presented, and its state."""

    person_id: str
    device_id: str
    identity_key: bytes | None  # None: no Signal session (unencrypted debugging messages)
    state: TrustState
    seen_at: float = 0.0

    @property
    def trusted(self) -> bool:
        return self.state is TrustState.TRUSTED

    @property
    def code(self) -> str:
        """The verification code the person's app shows for this key, or "" without one."""
        return verification_code(self.identity_key) if self.identity_key else ""

    def shows_code(self, typed: str) -> bool:
        """Whether a typed verification code is this device's (spaces and case aside; never
        for a device without a key, which shows no code to confirm)."""
        return bool(self.code) and _bare(self.code) == _bare(typed)

    def to_json(self) -> dict[str, Any]:
        return {
            "person_id": self.person_id,
            "device_id": self.device_id,
            "identity_key": self.identity_key.hex() if self.identity_key else None,
            "state": self.state.value,
            "seen_at": self.seen_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeviceTrust:
        key = data.get("identity_key")
        return cls(
            str(data["person_id"]),
            str(data["device_id"]),
            bytes.fromhex(key) if isinstance(key, str) else None,
            TrustState(data["state"]),
            float(data.get("seen_at") or 0.0),
        )


class KeyChangedError(PacerelleError):
    """The device presents another key than the one a decision was shown for."""

    kind = ErrorKind.KEY_CHANGED

    def __init__(self, current: DeviceTrust) -> None:
        super().__init__(f"{current.person_id} device {current.device_id} presents another key")
        self.current = current


def _bare(code: str) -> str:
    return "".join(code.split()).upper()


def _eviction_order(device: DeviceTrust) -> tuple[bool, float]:
    decided = device.state in (TrustState.TRUSTED, TrustState.BLOCKED)
    return (decided, device.seen_at)


def device_name(person_id: str, device_id: str) -> str:
    # "|" and the device id (digits) last: no two (person, device) pairs share a name.
    return f"{person_id}|{device_id}"


@dataclass(frozen=True, slots=True)
class TrustBook:
    devices: Mapping[str, DeviceTrust] = field(default_factory=dict)
    # Whether the owner's first device may still be trusted on first use: False once a
    # book may have lost decisions (restored, rebuilt: kept.py), as the relay could then be
    # first.
    first_use: bool = True

    def get(self, person_id: str, device_id: str) -> DeviceTrust | None:
        return self.devices.get(device_name(person_id, device_id))

    def trusted_keys(self, person_id: str) -> set[bytes]:
        return {
            d.identity_key
            for d in self.devices.values()
            if d.person_id == person_id and d.trusted and d.identity_key is not None
        }

    def blocked_keys(self, person_id: str) -> set[bytes]:
        return {
            d.identity_key
            for d in self.devices.values()
            if d.person_id == person_id
            and d.state is TrustState.BLOCKED
            and d.identity_key is not None
        }

    def knows(self, person_id: str) -> bool:
        return any(d.person_id == person_id for d in self.devices.values())

    def judge(
        self, person_id: str, device_id: str, key: bytes | None, owner_id: str
    ) -> DeviceTrust:
        """The state of this device presenting this key, by the rules above (no change)."""
        return DeviceTrust(
            person_id, device_id, key, self._state(person_id, device_id, key, owner_id)
        )

    def readable(self, person_id: str, device_id: str, key: bytes | None) -> TrustState:
        """The state that decides whether the agent may seal for this key: as `judge`, but
        never trusted on first use (only a message of the owner's first device, judged and
        recorded, is; a session the relay opened before the owner wrote is not)."""
        return self._state(person_id, device_id, key, None)

    def _state(
        self, person_id: str, device_id: str, key: bytes | None, owner_id: str | None
    ) -> TrustState:
        known = self.get(person_id, device_id)
        if known is not None and known.state is TrustState.BLOCKED:
            state = TrustState.BLOCKED
        elif key is None:
            state = TrustState.UNVERIFIED
        elif key in self.blocked_keys(person_id):
            # Before the device's own record: a book from before decisions followed the key
            # can hold the key trusted under one device id and blocked under another.
            state = TrustState.BLOCKED
        elif known is not None and known.identity_key == key:
            state = known.state
        elif key in self.trusted_keys(person_id):
            state = TrustState.TRUSTED
        elif known is not None and known.state in (TrustState.TRUSTED, TrustState.CHANGED):
            state = TrustState.CHANGED
        elif (
            known is None and person_id == owner_id and self.first_use and not self.knows(owner_id)
        ):
            state = TrustState.TRUSTED  # the owner's first device: trust on first use
        else:
            state = TrustState.UNVERIFIED
        return state

    def observe(
        self, person_id: str, device_id: str, key: bytes | None, owner_id: str, now: float
    ) -> tuple[TrustBook, DeviceTrust]:
        """Judge the device and record what was seen (its key, state and time)."""
        judged = replace(self.judge(person_id, device_id, key, owner_id), seen_at=now)
        known = self.get(person_id, device_id)
        if known is not None and known.state is TrustState.BLOCKED:
            judged = replace(judged, identity_key=known.identity_key)
        return self._with(judged), judged

    def decided(
        self, person_id: str, device_id: str, state: TrustState, *, key: bytes | None
    ) -> TrustBook:
        """The user's decision for the device, bound to the key they were shown: KeyChangedError
        if the device presents another one now (nothing decided); KeyError if unknown."""
        known = self.devices[device_name(person_id, device_id)]
        if known.identity_key != key:
            raise KeyChangedError(known)
        book = self._with(replace(known, state=state))
        if state in (TrustState.BLOCKED, TrustState.TRUSTED) and known.identity_key is not None:
            # A decision belongs to the key, which the relay can present under any device id
            # of the person: the records that share it get it too (the latest one wins).
            for other in self.devices.values():
                if other.person_id == person_id and other.identity_key == known.identity_key:
                    book = book._with(replace(other, state=state))
        return book

    def reverified(self) -> tuple[TrustBook, list[DeviceTrust]]:
        """This book as one that may be older than the decisions made since (kept.py): every
        trusted device unverified, blocked and changed ones as they are, no first use; and
        the devices it made unverified."""
        trusted = [d for d in self.devices.values() if d.trusted]
        reset = [replace(d, state=TrustState.UNVERIFIED) for d in trusted]
        devices = dict(self.devices)
        for device in reset:
            devices[device_name(device.person_id, device.device_id)] = device
        return TrustBook(devices, first_use=False), reset

    def trusted_devices(self, person_id: str) -> list[DeviceTrust]:
        """The person's trusted devices, the most recently seen first."""
        found = [d for d in self.devices.values() if d.person_id == person_id and d.trusted]
        return sorted(found, key=lambda d: d.seen_at, reverse=True)

    def _with(self, device: DeviceTrust) -> TrustBook:
        devices = dict(self.devices)
        devices[device_name(device.person_id, device.device_id)] = device
        if len(devices) > MAX_TRUST_RECORDS:
            oldest = sorted(devices, key=lambda name: _eviction_order(devices[name]))
            for name in oldest[: len(devices) - MAX_TRUST_RECORDS]:
                del devices[name]
        return TrustBook(devices, self.first_use)

    def to_json(self) -> dict[str, Any]:
        return {
            "devices": [device.to_json() for device in self.devices.values()],
            "first_use": self.first_use,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrustBook:
        devices = [DeviceTrust.from_json(item) for item in data.get("devices") or ()]
        first_use = data.get("first_use", True)  # absent from the host's file of before
        if not isinstance(first_use, bool):
            raise TypeError("first_use is not a boolean")
        return cls({device_name(d.person_id, d.device_id): d for d in devices}, first_use)

    @classmethod
    def seeded(
        cls, sessions: Iterable[tuple[str, str, bytes]], owner_id: str, now: float
    ) -> TrustBook:
        """The book of an agent that had sessions before trust existed (kept.py says when):
        the owner's devices trusted, everyone else's unverified."""
        book = cls()
        for person_id, device_id, key in sessions:
            state = TrustState.TRUSTED if person_id == owner_id else TrustState.UNVERIFIED
            book = book._with(DeviceTrust(person_id, device_id, key, state, now))
        return book

    @classmethod
    def unverified(cls, sessions: Iterable[tuple[str, str, bytes]], now: float) -> TrustBook:
        """The book that replaces one that is lost (kept.py): every session's device
        unverified, no first use, so nothing is trusted until the user decides again."""
        book = cls(first_use=False)
        for person_id, device_id, key in sessions:
            book = book._with(DeviceTrust(person_id, device_id, key, TrustState.UNVERIFIED, now))
        return book


def session_identities(signal: AgentSignalState) -> list[tuple[str, str, bytes]]:
    """(person, device, identity key) of every session the agent holds with a known key,
    read from the record names by the engine's own naming rule (signal/session.py)."""
    found = []
    for name, record in signal.sessions.items():
        address = address_of(name)
        if address is not None and record.trusted_identity is not None:
            found.append((address.user_id, str(address.device_id), record.trusted_identity))
    return found


class Unkept(StrEnum):
    """A store without a book of its own: from before the book moved in, or one it lost."""

    OUTSIDE = "outside"  # absent: a store of an earlier version (the host's file, or none)
    LOST = "lost"  # present but unreadable


def stored_book(section: object) -> TrustBook | Unkept:
    """The store document's "trust" section read, failing closed: absent, OUTSIDE; not a
    book, LOST (the rest of the store stays readable). An Unkept is written as its value."""
    if section is None or section == Unkept.OUTSIDE.value:
        return Unkept.OUTSIDE
    if not isinstance(section, Mapping):
        return Unkept.LOST
    try:
        return TrustBook.from_json(section)
    except (KeyError, TypeError, ValueError, AttributeError):
        return Unkept.LOST
