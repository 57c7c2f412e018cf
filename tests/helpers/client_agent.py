"""An HA-free agent wired to a running emulator, with its saves and hand-overs recorded.

The agent commits through the client's whole-document store (client/state/document_store.py)
into `Recorder.save`: each document it would write, as written."""

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from custom_components.pacerelle.client.agent.agent import Agent
from custom_components.pacerelle.client.agent_core import (
    AgentConfig,
    AgentHooks,
    ConnectionState,
    Download,
)
from custom_components.pacerelle.client.relay.agent_connect import request_runtime_token
from custom_components.pacerelle.client.relay.tokens import IssuedToken, RuntimeTokens
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.document_store import DocumentStore
from custom_components.pacerelle.client.trust.door import TrustDoor
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.trust_book import TrustBook, session_identities
from tests.helpers.emulator import EmulatorHandle, Installed

ONE_FILE = [{"data_b64": "aGk=", "name": "a.txt", "mime": "text/plain"}]
"""The `attachments` of an emulator send with one file: only a request with files is given
to the host's `prepare` (inbox/delivery.py), where tests interrupt a hand-over."""


async def to_thread[T](function: Callable[[], T]) -> T:
    return await asyncio.to_thread(function)


@dataclass
class Recorder:
    delivered: list[Request] = field(default_factory=list)
    # (mark, trusted) as the store's `mark` keeps them, in order.
    marks: list[tuple[str, bool]] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)
    revoked: int = 0
    token_requests: int = 0

    async def save(self, document: dict[str, Any]) -> None:
        # Through JSON, as the store would: proves the document is plain JSON.
        self.documents.append(json.loads(json.dumps(document)))

    def deliver(self, request: Request) -> None:
        self.delivered.append(request)

    def mark(self, mark: str, trusted: bool) -> None:
        self.marks.append((mark, trusted))

    def prepare(self, request: Request, _download: Download) -> None:
        """Nothing to prepare (tests replace it to interrupt a hand-over: see ONE_FILE)."""

    def on_revoked(self) -> None:
        self.revoked += 1

    @property
    def last_document(self) -> dict[str, Any]:
        return copy.deepcopy(self.documents[-1])


def make_agent(
    emulator: EmulatorHandle,
    installed: Installed,
    recorder: Recorder,
    *,
    data: AgentData | None = None,
    encrypted: bool = True,
    session: aiohttp.ClientSession | None = None,
    trust: TrustDoor | None = None,
) -> Agent:
    http = session or emulator.session

    async def fetch() -> IssuedToken:
        recorder.token_requests += 1
        return await request_runtime_token(http, emulator.base_url, installed.installation_token)

    config = AgentConfig(
        agent_id=installed.agent_id,
        owner_id=installed.owner_id,
        conversation_id=installed.conversation_id,
        server_url=emulator.base_url,
        encrypted=encrypted,
        backoff_base=0.05,
        backoff_cap=0.2,
    )
    hooks = AgentHooks(
        run_blocking=to_thread,
        deliver=recorder.deliver,
        prepare=recorder.prepare,
        revoked=recorder.on_revoked,
    )
    # As the host keeps the trust book beside the store: a restarted agent's book is the
    # one a host seeds from its sessions (the owner's devices trusted), unless given.
    if trust is None and data is not None:
        book = TrustBook.seeded(session_identities(data.signal), installed.owner_id, time.time())
        trust = TrustDoor(installed.owner_id, book)
    return Agent(
        http,
        config,
        hooks,
        RuntimeTokens(fetch),
        data or AgentData(AgentSignalState.new()),
        {"installation": {"agent_id": installed.agent_id}},
        trust,
        store=DocumentStore(recorder.save, to_thread, mark=recorder.mark),
    )


async def wait_for(condition: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polls state owned by other tasks
            await asyncio.sleep(0.01)


@asynccontextmanager
async def connected_agent(
    emulator: EmulatorHandle,
    installed: Installed,
    recorder: Recorder,
    *,
    data: AgentData | None = None,
    encrypted: bool = True,
) -> AsyncIterator[Agent]:
    """The agent of `make_agent`, started and connected; stopped on the way out, however left."""
    agent = make_agent(emulator, installed, recorder, data=data, encrypted=encrypted)
    agent.start()
    try:
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        yield agent
    finally:
        await agent.stop()
