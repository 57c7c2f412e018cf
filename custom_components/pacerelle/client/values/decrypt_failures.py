"""Bookkeeping of incoming messages that could not be decrypted, per person and device.

After a restore of the agent's Signal state, a device's messages fail (`invalid_mac`) until it
starts a new session; STALLED_RUN failures in a row from a device we had a session with mark a
stalled conversation. A hostile relay can forge such a run, gaining only a misleading notice
(it could drop the messages anyway); the devices it can invent are bounded
(MAX_DECRYPT_FAILURE_DEVICES). Only direct messages' outcomes are recorded, as the engine's
error kind, never content. A decrypted message ends a run, but only a PreKey message (a new
session) clears a stall. Kept in memory only: a restart begins a new count.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..limits import MAX_DECRYPT_FAILURE_DEVICES

STALLED_RUN = 3
"""Failures in a row from a device that had a session before the conversation is stalled."""


@dataclass(frozen=True, slots=True)
class DeviceKey:
    """One device of one person in one conversation."""

    sender_id: str
    conversation_id: str
    device_id: str


@dataclass(frozen=True, slots=True)
class DecryptionOutcome:
    """What happened to one direct message's decryption (no content, only its fate).

    `reason` is the engine's error kind on failure, None on success; `new_session` is true
    for a PreKey message that decrypted; `had_session` says whether we held a session with
    the device before the message; `device_code` is the verification code of the device's
    identity key as we knew it (None if unknown).
    """

    device: DeviceKey
    at: float
    reason: str | None = None
    new_session: bool = False
    had_session: bool = False
    device_code: str | None = None

    @property
    def failed(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True, slots=True)
class DeviceFailures:
    """The counts of one device since the agent started (or since its last new session)."""

    total: int = 0
    run: int = 0  # failures since the last message that decrypted
    last_reason: str | None = None
    last_at: float | None = None
    had_session: bool = False
    device_code: str | None = None
    stalled: bool = False  # set by a run of STALLED_RUN; cleared by a new session only


@dataclass
class DecryptFailures:
    """The counts of every device (mutable; used on the event loop only)."""

    devices: dict[DeviceKey, DeviceFailures] = field(default_factory=dict)

    def record(self, outcome: DecryptionOutcome) -> DeviceFailures:
        """Count `outcome`; the device's counts after it."""
        key = outcome.device
        before = self.devices.pop(key, DeviceFailures())
        if outcome.new_session:
            after = DeviceFailures()  # a new session: the conversation is whole again
        elif outcome.failed:
            after = replace(
                before,
                total=before.total + 1,
                run=before.run + 1,
                last_reason=outcome.reason,
                last_at=outcome.at,
                had_session=before.had_session or outcome.had_session,
                device_code=outcome.device_code or before.device_code,
            )
        else:
            after = replace(before, run=0)
        if after.had_session and after.run >= STALLED_RUN:
            after = replace(after, stalled=True)
        if after != DeviceFailures():
            self.devices[key] = after  # re-inserted last: dict order is recency
            while len(self.devices) > MAX_DECRYPT_FAILURE_DEVICES:
                del self.devices[next(iter(self.devices))]
        return after

    @property
    def total(self) -> int:
        return sum(counts.total for counts in self.devices.values())

    def to_json(self) -> list[dict[str, Any]]:
        """For diagnostics: ids, counts, reasons and times; nothing of any message."""
        return [
            {
                "sender_id": key.sender_id,
                "conversation_id": key.conversation_id,
                "device_id": key.device_id,
                "total": counts.total,
                "run": counts.run,
                "last_reason": counts.last_reason,
                "last_at": counts.last_at,
                "stalled": counts.stalled,
            }
            for key, counts in self.devices.items()
        ]
