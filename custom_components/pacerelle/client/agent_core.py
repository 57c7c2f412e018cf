"""What the agent's parts share: configuration, hooks, the data and its one writer.

Every change to the agent's data is a transaction under `lock`: compute a new AgentData
(in the executor when it is crypto), `commit` it to the agent's own store (state/agent_store.py:
within its bounds, in the executor, durable when it returns), and only then use it. A failed
commit keeps the old data.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

from .conversations.group_key_bounds import KeyValue
from .errors import PacerelleConnectionError
from .relay.gateway import GatewayConnection
from .store_bounds import within_bounds
from .stored_sizes import StoredSizes
from .trust.door import TrustDoor
from .values.agent_data import AgentData
from .values.decrypt_failures import DecryptionOutcome
from .values.requests import Request

_LOGGER = logging.getLogger(__name__)


def _within_bounds(
    sizes: StoredSizes, group_keys_valued: KeyValue | None, data: AgentData
) -> AgentData:
    return within_bounds(data, sizes, group_keys_valued)


@dataclass(frozen=True, slots=True)
class CommitTiming:
    """Wall seconds of the last commit: `build` (0: the bounds run in the store's job), then
    the store's job (bounds, encryption, write and fsyncs). For scripts/bench's stage times."""

    build: float
    save: float


class ConnectionState(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    DISCONNECTED = "disconnected"
    STOPPED = "stopped"


type Bound = Callable[[AgentData], AgentData]
type Download = Callable[[str, int], Awaitable[bytes]]
"""The bytes of a request's file (message id, index from 0), checked and decrypted."""


class BlockingRunner(Protocol):
    """Runs a blocking function off the event loop (Home Assistant's executor)."""

    def __call__[T](self, function: Callable[[], T], /) -> Awaitable[T]: ...


class Storage(Protocol):
    """The agent's store (state/agent_store.py; state/document_store.py writes whole
    documents): `commit` writes the integration's keys and `data` within `bound`, durable
    (the marks kept so far too) when it returns, and returns the data committed; `mark`
    keeps a request's hand-over mark (values/handed_over.py: the mark, whether the request is
    trusted) right before its event: synchronously, on the loop, without a system call, and
    durable against a killed process at once (state/handed_over_file.py), so that after a
    kill the agent knows which events fired."""

    async def commit(
        self, extra: dict[str, Any], data: AgentData, bound: Bound | None = None
    ) -> AgentData: ...

    def mark(self, mark: str, trusted: bool) -> None: ...


def _nothing(*_args: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class AgentConfig:
    agent_id: str
    owner_id: str
    conversation_id: str
    server_url: str
    encrypted: bool = True
    backoff_base: float = 1.0
    backoff_cap: float = 30.0


@dataclass(frozen=True, slots=True)
class AgentHooks:
    """How the agent reaches its host.

    `prepare` readies a request with files before it is saved as accepted (saves them,
    transcribes a voice note; may await), given the agent's `Download` for its files; the
    client calls it for those only, and hands a
    batch without files over under the hold of the lock that saved it (inbox/delivery.py).
    `deliver` then hands a request over (fires the event) synchronously, right after its
    hand-over mark.
    The agent's data is not the host's: the agent commits it to its own store (Storage).
    """

    run_blocking: BlockingRunner
    deliver: Callable[[Request], None]
    prepare: Callable[[Request, Download], Awaitable[None] | None] = field(default=_nothing)
    status_changed: Callable[[], None] = field(default=_nothing)
    revoked: Callable[[], None] = field(default=_nothing)
    # Each direct message's decryption outcome, once the state after it is saved.
    decryption: Callable[[DecryptionOutcome], None] = field(default=_nothing)
    # (message id, conversation id, status) of each send as it changes (outbox/flush.py).
    send_status: Callable[[str, str, str], None] = field(default=_nothing)


async def commit_before_start(
    store: Storage, extra: Mapping[str, Any], data: AgentData
) -> AgentData:
    """Commit `data` before the agent's core exists (agent/identity.py), as it is (the store it
    was read from holds it within bounds); the data committed. A failed commit raises and
    changes nothing."""
    return await store.commit(dict(extra), data, _as_is)


def _as_is(data: AgentData) -> AgentData:
    return data


class AgentCore:
    def __init__(
        self,
        config: AgentConfig,
        hooks: AgentHooks,
        data: AgentData,
        extra: dict[str, Any],
        trust: TrustDoor | None = None,
        *,
        store: Storage,
    ) -> None:
        self.config = config
        self.hooks = hooks
        self.store = store
        self.lock = asyncio.Lock()
        self._data = data
        self._extra = extra  # the integration's document keys, passed through
        self.connection: GatewayConnection | None = None
        self.connection_serial = 0
        self.state = ConnectionState.STOPPED
        self._sizes = StoredSizes()  # used under `lock` only
        self.last_commit = CommitTiming(0.0, 0.0)
        # The one door for trust (trust/door.py): the group keys it would seal with are
        # the last evicted (group_key_bounds.py). Its book is committed with the data.
        self.trust = trust if trust is not None else TrustDoor(config.owner_id)
        self.trust.kept_by(self._commit_book)

    @property
    def data(self) -> AgentData:
        return self._data

    async def commit(self, data: AgentData) -> None:
        """Save `data` durably, then make it current. Call with `lock` held.

        What is saved is `data` within the store's bounds (store_bounds.py): the oldest
        requests and sessions beyond them are evicted first, in the store's executor job,
        so a save never fails for its size alone. The trust door's book goes with it.
        """
        data = self._with_book(data)
        if data is not self._data:
            await self._save(data)

    async def _commit_book(self) -> None:
        """Commit the door's book as it is now (a decision: trust/door.py `keep`)."""
        async with self.lock:
            await self.commit(self._data)

    def _with_book(self, data: AgentData) -> AgentData:
        book = self.trust.book
        return data if data.trust is book else replace(data, trust=book)

    async def commit_handed_over(self, data: AgentData, hand_over: Callable[[], None]) -> None:
        """Make `data` (requests accepted) current, `hand_over` them (marks and events,
        synchronously), then save `data` with the marks (one commit: both survive a power
        cut when it returns). Call with `lock` held. The requests were handed over once
        `hand_over` returns, so the agent holds them as accepted even if the save fails: a
        redelivery is then only acknowledged, the next commit writes them, and after a
        restart their marks say the same (inbox/pipeline.py)."""
        self._data = data = self._with_book(data)
        hand_over()
        await self._save(data)

    async def _save(self, data: AgentData) -> None:
        started = time.perf_counter()
        valued = self.trust.seal_rule().group_key_allowed(None)
        bound = partial(_within_bounds, self._sizes, valued)
        data = await self.store.commit(dict(self._extra), data, bound)
        self.last_commit = CommitTiming(0.0, time.perf_counter() - started)
        self._data = data

    def set_state(self, state: ConnectionState) -> None:
        if state is not self.state:
            _LOGGER.debug("Agent %s: %s", self.config.agent_id, state)
            self.state = state
            self.hooks.status_changed()

    async def write(self, text: str) -> int:
        """Write a frame on the open connection; its serial (for send confirmation)."""
        connection = self.connection
        if connection is None or connection.closed:
            raise PacerelleConnectionError("the agent is not connected")
        await connection.send(text)
        return self.connection_serial

    @staticmethod
    def now() -> float:
        return time.time()
