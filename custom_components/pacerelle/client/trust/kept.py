"""Where the trust book is kept, and the book an agent starts with when its own is older or lost.

The book is records of the agent's encrypted store (state/kinds.py: a row per device and one
for the book), committed with the rest of the agent's data, so whatever puts an older store
back puts back its book with it, and the store's restore detection covers both. Hosts of
earlier versions kept it in a file of their own beside the store; a store of then has no book
in it (`Unkept.OUTSIDE`), and the host hands that file's content to `starting_book` once,
deleting the file after the book is committed; a store with its book never reads that file.

The rules at a start (`starting_book`); none trusts more than the newer state did:

- the store's own book is taken as it is;
- a store put back from an older copy (`restored`: the host's witness) may have missed later
  decisions: every trusted device becomes unverified (blocked ones stay blocked), and first
  use is spent (`TrustBook.first_use`), so nothing acts until the user verifies again;
- a store whose book cannot be read (`Unkept.LOST`) gets one with every session's device
  unverified and no first use;
- a store from before the book moved in takes the host's file; without one, it is seeded
  from the sessions (the owner's devices trusted: `TrustBook.seeded`) only when it can be a
  store of before trust existed, not restored and no stored request judged (every request
  is judged once trust exists, trust/door.py), so a deleted file never re-seeds trust, nor
  does a store put back from before the move; otherwise it is unverified as a lost one.

A new agent (no identity yet) starts with an empty book, first use open: its owner's first
device is trusted on first use. Every loss is returned (`TrustLoss`) for the host to show.
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
