"""The agent's Signal identity before it runs: made once, re-keyed after a restore.

`starting_data` is the one place that decides both. A store that never had an identity gets a
new one; a store that was read (whatever else it holds) is never given another: an
unreadable store is an error before this is reached (the host's load). Each change is
committed to the agent's store before it is returned, and nothing of it is published
before the agent starts: a failed commit leaves the store as it was (no identity, or the
old prekeys) and the next start decides again, so an identity is published only once it is
the one the store holds. A store put back from an older copy (the host's witness says so)
gets fresh one-time prekeys for the ids the lost, newer state published (agent/restore.py);
a new identity has published nothing, so it has nothing to re-key. The trust book the host
decided to start with (trust/kept.py `starting_book`) is committed with it, before anything
else is written.
"""

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from ..agent_core import AgentHooks, Storage, commit_before_start
from ..signal.state import AgentSignalState
from ..values.agent_data import AgentData
from ..values.trust_book import TrustBook
from .restore import rekeyed_after_restore


async def starting_data(
    stored: AgentData | None,
    *,
    restored: bool,
    hooks: AgentHooks,
    store: Storage,
    extra: Mapping[str, Any],
    book: TrustBook | None = None,
) -> AgentData:
    """The data the agent starts with, committed: `stored`, a new identity for a store that
    never had one, or `stored` re-keyed when it is an older copy (`restored`); with `book`
    (trust/kept.py) when given, committed if it is not the stored one."""
    if stored is None:
        # Key generation is CPU work: in the host's executor.
        data = AgentData(await hooks.run_blocking(AgentSignalState.new))
        return await commit_before_start(store, extra, data)
    data = stored if book is None or stored.trust is book else replace(stored, trust=book)
    if restored:
        return await commit_before_start(
            store, extra, await hooks.run_blocking(partial(rekeyed_after_restore, data))
        )
    if data is not stored:
        return await commit_before_start(store, extra, data)
    return stored
