"""A real agent store (client/state/agent_store.py) in a test's folder, and its reopening:
what a commit made durable is what a new process would load."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from custom_components.pacerelle.client import AgentStores, StoreLocation
from custom_components.pacerelle.client.state.agent_store import AgentStore
from custom_components.pacerelle.client.values.agent_data import AgentData

INSTALLATION: dict[str, Any] = {"installation": {"agent_id": "agt"}}


async def to_thread[T](function: Callable[[], T]) -> T:
    return await asyncio.to_thread(function)


def _stores(folder: Path) -> AgentStores:
    return AgentStores(StoreLocation(folder / "records", folder), to_thread)


@asynccontextmanager
async def new_store(folder: Path) -> AsyncIterator[AgentStore]:
    """A store created with the installation's keys and loaded, closed on the way out."""
    store = _stores(folder).get("agt")
    await store.create(dict(INSTALLATION))
    await store.load_data()
    try:
        yield store
    finally:
        await store.close()


async def reopened(folder: Path) -> tuple[dict[str, Any], AgentData | None]:
    """What the store in `folder` holds, read by a store opened anew."""
    store = _stores(folder).get("agt")
    try:
        return await store.load_data()
    finally:
        await store.close()
