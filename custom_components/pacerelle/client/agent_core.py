"""What the agent's parts share: configuration, hooks, the data and its one writer.

Every change to the agent's data is a transaction under `lock`: compute a new AgentData
(in the executor when it is crypto), `commit` it (the document is built in the executor
and saved through the hook), and only then use it. A failed save keeps the old data.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

from .agent_data import AgentData
from .conversations.group_key_bounds import KeyValue
from .encrypted_file import DocumentTooLargeError
from .errors import PacerelleConnectionError
from .inbox.decrypt_failures import DecryptionOutcome
from .inbox.requests import Request
from .relay.gateway import GatewayConnection
from .store_bounds import shrink, within_bounds
from .stored_sizes import StoredSizes
from .trust.door import TrustDoor

_LOGGER = logging.getLogger(__name__)


MAX_SHRINKS = 3
"""Extra evictions tried when the writer finds a document too large (one is the rule)."""


def _document(extra: dict[str, Any], data: AgentData) -> dict[str, Any]:
    """The whole store document: the integration's keys and the runtime's sections."""
    return {**extra, **data.sections()}


def _bounded_document(
    extra: dict[str, Any],
    data: AgentData,
    sizes: StoredSizes,
    group_keys_valued: KeyValue | None = None,
) -> tuple[AgentData, dict[str, Any]]:
    """`data` within bounds and its document: one executor job (each hop costs latency)."""
    data = within_bounds(data, sizes, group_keys_valued)
    return data, _document(extra, data)


def _within_bounds(
    sizes: StoredSizes, group_keys_valued: KeyValue | None, data: AgentData
) -> AgentData:
    return within_bounds(data, sizes, group_keys_valued)


@dataclass(frozen=True, slots=True)
class CommitTiming:
    """Wall seconds of the last commit: bounds and document (executor), then the save
    (JSON, encryption, write and fsyncs). For scripts/bench's stage times."""

    build: float
    save: float


class ConnectionState(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    DISCONNECTED = "disconnected"
    STOPPED = "stopped"


type Bound = Callable[[AgentData], AgentData]
type CommitHook = Callable[[dict[str, Any], AgentData, Bound, bool], Awaitable[AgentData]]


class BlockingRunner(Protocol):
    """Runs a blocking function off the event loop (Home Assistant's executor)."""

    def __call__[T](self, function: Callable[[], T], /) -> Awaitable[T]: ...


def _nothing(*_args: Any) -> None:
    return None


def _always(*_args: Any) -> bool:
    return True


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

    `prepare` readies a request before it is saved as accepted (saves its files; may await);
    `deliver` then hands it over (fires the event) synchronously, right after that save.
    `may_prepare` says, before anything is saved, whether `prepare` could have work for a
    request: when it is False for a whole batch, prepare is not called and the batch is
    handed over under the same hold of the lock as its decryption (inbox/pipeline.py). It
    must not guess low: a request it wrongly rules out is handed over unprepared.
    `mark` keeps a request's hand-over mark (handed_over.py: the mark, whether the request
    is trusted) right before its event: synchronously, on the loop, without a system call,
    and durable against a killed process at once (the host's journal: store/handed_over.py),
    so that after a kill the agent knows which events fired. Without it, the marks are kept
    only with the data `save` writes.
    """

    save: Callable[[dict[str, Any]], Awaitable[None]]
    run_blocking: BlockingRunner
    deliver: Callable[[Request], None]
    mark: Callable[[str, bool], None] = field(default=_nothing)
    prepare: Callable[[Request], Awaitable[None] | None] = field(default=_nothing)
    may_prepare: Callable[[Request], bool] = field(default=_always)
    identity_changed: Callable[[str], None] = field(default=_nothing)
    status_changed: Callable[[], None] = field(default=_nothing)
    revoked: Callable[[], None] = field(default=_nothing)
    # Each direct message's decryption outcome, once the state after it is saved.
    decryption: Callable[[DecryptionOutcome], None] = field(default=_nothing)
    # (message id, conversation id, status) of each send as it changes (outbox/flush.py).
    send_status: Callable[[str, str, str], None] = field(default=_nothing)
    # A save that survives a killed process but not yet a power cut, and what makes the
    # last one survive that too (AgentCore.commit's `sync`). Without them, `save` alone.
    save_unsynced: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    sync: Callable[[], Awaitable[None]] | None = None
    # A store that writes only what changed (client/state/): takes the integration's keys,
    # the data, the bounds to apply first (in one executor job) and `sync` (as `commit`'s),
    # and returns the data it committed. When set, `save` (a whole document) is not used
    # by commits; `sync` then makes what it wrote unsynced survive a power cut.
    commit: CommitHook | None = None


async def commit_before_start(
    hooks: AgentHooks, extra: Mapping[str, Any], data: AgentData
) -> AgentData:
    """Commit `data` before the agent's core exists (identity.py): through the host's
    `commit` (or a whole document through `save`), as it is (the store it was read from
    holds it within bounds); the data committed. A failed save raises and changes nothing."""
    if hooks.commit is not None:
        return await hooks.commit(dict(extra), data, _as_is, True)
    await hooks.save(_document(dict(extra), data))
    return data


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
    ) -> None:
        self.config = config
        self.hooks = hooks
        self.lock = asyncio.Lock()
        self._data = data
        self._extra = extra  # the integration's document keys, passed through
        self.connection: GatewayConnection | None = None
        self.connection_serial = 0
        self.state = ConnectionState.STOPPED
        self._sizes = StoredSizes()  # used under `lock` only
        self.last_commit = CommitTiming(0.0, 0.0)
        self._unsynced = False  # the last commit's rename not yet made power-cut durable
        # The one door for trust (trust/door.py): the group keys it would seal with are
        # the last evicted (group_key_bounds.py).
        self.trust = trust if trust is not None else TrustDoor(config.owner_id)

    @property
    def data(self) -> AgentData:
        return self._data

    async def commit(self, data: AgentData, *, sync: bool = True) -> None:
        """Save `data` durably, then make it current. Call with `lock` held.

        What is saved is `data` within the store's bounds (store_bounds.py): the oldest
        requests and sessions beyond them are evicted first, and again if the writer finds
        the document still too large to load, so a save never fails for its size alone.
        With `sync` False (and the host's `save_unsynced`), the save survives a killed
        process but a power cut only after `sync()`: the caller acts in between, as soon
        as the document is in place (inbox/pipeline.py: the events). With the host's
        `commit` (the per-record store, client/state/), the bounds and the commit run in
        one executor job, only what changed is written, and every commit is already
        durable against a power cut (`sync` has nothing left to do).
        """
        if data is not self._data:
            await self._save(data, sync=sync)

    async def commit_handed_over(self, data: AgentData, hand_over: Callable[[], None]) -> None:
        """Make `data` (requests accepted) current, `hand_over` them (marks and events,
        synchronously), then save `data` and make everything survive a power cut. Call with
        `lock` held. The requests were handed over once `hand_over` returns, so the agent
        holds them as accepted even if the save fails: a redelivery is then only
        acknowledged, the next commit writes them, and after a restart their marks say the
        same (inbox/pipeline.py)."""
        self._data = data
        hand_over()
        await self._save(data, sync=False)
        await self.sync()

    async def _save(self, data: AgentData, *, sync: bool) -> None:
        save = self.hooks.save
        if not sync and self.hooks.save_unsynced is not None:
            save = self.hooks.save_unsynced
        started = time.perf_counter()
        extra = dict(self._extra)
        valued = self.trust.seal_rule().group_key_allowed(None)
        if self.hooks.commit is not None:
            bound = partial(_within_bounds, self._sizes, valued)
            data = await self.hooks.commit(extra, data, bound, sync)
            self.last_commit = CommitTiming(0.0, time.perf_counter() - started)
            self._data = data
            # The records are durable at once (record_file.py); what the host writes beside
            # them (store.py: the hand-over marks) only after `sync` when `sync` is False.
            self._unsynced = not sync
            return
        data, document = await self.hooks.run_blocking(
            partial(_bounded_document, extra, data, self._sizes, valued)
        )
        built = time.perf_counter()
        for attempt in range(MAX_SHRINKS + 1):
            try:
                await save(document)
            except DocumentTooLargeError as err:
                if attempt == MAX_SHRINKS:
                    raise
                data = await self.hooks.run_blocking(partial(shrink, data, err.excess))
                document = await self.hooks.run_blocking(partial(_document, extra, data))
            else:
                break
        self.last_commit = CommitTiming(built - started, time.perf_counter() - built)
        self._data = data
        self._unsynced = save is not self.hooks.save

    async def sync(self) -> None:
        """Make the last commit survive a power cut too (see `commit`)."""
        if self._unsynced and self.hooks.sync is not None:
            await self.hooks.sync()
        self._unsynced = False

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
