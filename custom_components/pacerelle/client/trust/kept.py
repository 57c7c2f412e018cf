"""Where the trust book is kept, and the book an agent starts with when its own is older or lost.

The book is records of the agent's encrypted store (state/kinds.py), committed with its data,
so a restore puts its book back with it. A store of an earlier host has none (`Unkept.OUTSIDE`):
the host hands over its old file once and deletes it after the book is committed.
At a start (`starting_book`), never trusting more than the newer state did: the store's book
as it is; a restored store's trusted devices become unverified (blocked stay blocked) with
first use spent; an unreadable book (`Unkept.LOST`) leaves every device unverified; a store
from before the move without the host's file is seeded from its sessions (`TrustBook.seeded`)
only if it may predate trust (not restored, no request judged), else treated as lost. A new
agent starts empty with first use open. Every loss is returned (`TrustLoss`) for the host.
"""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..values.agent_data import AgentData
from ..values.trust_book import DeviceTrust, TrustBook, Unkept, session_identities, stored_book


class TrustLoss(StrEnum):
    """Why the decisions may be older than the newer state's: the host's repair says so."""

    RESTORED = "restored"  # the store is an older copy
    LOST = "lost"  # the book could not be read, or its file is gone


@dataclass(frozen=True, slots=True)
class StartingBook:
    """The book to start with, why it may hold fewer decisions, and the devices made
    unverified by it (each needs a decision again)."""

    book: TrustBook
    loss: TrustLoss | None = None
    reset: tuple[DeviceTrust, ...] = ()


def kept_outside(data: AgentData | None) -> bool:
    """Whether the host's file of earlier versions is to be read (once, at this start)."""
    return data is not None and data.trust is Unkept.OUTSIDE


def starting_book(
    data: AgentData | None,
    *,
    restored: bool,
    owner_id: str,
    legacy: Mapping[str, Any] | None = None,
) -> StartingBook:
    """The book a stored agent (`data`; none: a new one) starts with (module docstring);
    `legacy`: the content of the host's file of earlier versions, if there is one."""
    if data is None:
        return StartingBook(TrustBook())
    now = time.time()
    stored = data.trust
    sessions = session_identities(data.signal)
    if stored is Unkept.OUTSIDE and legacy is not None:
        found = stored_book(legacy)
        stored = found if isinstance(found, TrustBook) else Unkept.LOST
    if stored is Unkept.OUTSIDE:
        inbox = data.inbox
        requests = [
            *(request for _, request in inbox.received.values()),
            *inbox.pending.values(),
            *(handled.request for handled in data.history.requests),
        ]
        if restored or any(request.trust_state is not None for request in requests):
            stored = Unkept.LOST
        else:
            return StartingBook(TrustBook.seeded(sessions, owner_id, now))
    if not isinstance(stored, TrustBook):  # lost
        book = TrustBook.unverified(sessions, now)
        return StartingBook(book, TrustLoss.LOST, tuple(book.devices.values()))
    if restored:
        book, reset = stored.reverified()
        return StartingBook(book, TrustLoss.RESTORED, tuple(reset))
    return StartingBook(stored)
