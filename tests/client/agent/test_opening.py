"""One way to open an agent (client/agent/opening.py): installed, opened, closed, opened again,
against the emulator; a start is told before its first token can fail; a store without its
installation is refused, never made anew."""

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from custom_components.pacerelle.client import (
    AgentConfig,
    AgentHooks,
    AgentHost,
    AgentStores,
    Installation,
    Opening,
    PacerelleError,
    StoreError,
    StoreLocation,
    StoreProblem,
    install_agent,
    open_agent,
)
from custom_components.pacerelle.client.agent.generation import GENERATION_KEY
from custom_components.pacerelle.client.trust.kept import TrustLoss
from tests.helpers.emulator import EmulatorHandle, Installed


async def to_thread[T](function: Callable[[], T]) -> T:
    return await asyncio.to_thread(function)


class Witness:
    """The host's witness of the store's generation, in memory."""

    def __init__(self, last: int | None = None) -> None:
        self.generations: list[int] = [] if last is None else [last]

    async def last(self) -> int | None:
        return self.generations[-1] if self.generations else None

    async def record(self, generation: int) -> None:
        self.generations.append(generation)


class NoEarlierTrust:
    def __init__(self) -> None:
        self.removed = 0

    async def load(self) -> dict[str, Any] | None:
        return None

    async def remove(self) -> None:
        self.removed += 1


def _installation(installed: Installed) -> Installation:
    return Installation(
        installed.agent_id,
        installed.owner_id,
        installed.conversation_id,
        installed.installation_token,
    )


def _config(emulator: EmulatorHandle, installed: Installed) -> AgentConfig:
    return AgentConfig(
        agent_id=installed.agent_id,
        owner_id=installed.owner_id,
        conversation_id=installed.conversation_id,
        server_url=emulator.base_url,
    )


def _host(session: aiohttp.ClientSession, witness: Witness, told: list[Opening]) -> AgentHost:
    return AgentHost(
        session=session,
        hooks=AgentHooks(run_blocking=to_thread, deliver=lambda _request: None),
        witness=witness,
        earlier_trust=NoEarlierTrust(),
        trust_changed=lambda _device, _before: None,
        opened=told.append,
    )


async def test_installed_opened_closed_and_opened_again(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    installed = await emulator.install()
    stores = AgentStores(StoreLocation(tmp_path / "records", tmp_path), to_thread)
    store = stores.get(installed.agent_id)
    await install_agent(store, _installation(installed), emulator.base_url)
    witness, told = Witness(), []
    async with aiohttp.ClientSession() as session:
        agent = await open_agent(store, _config(emulator, installed), _host(session, witness, told))
        code = agent.verification_code
        assert told == [Opening(restored=False, trust_loss=None, reset=())]
        assert witness.generations == [1]
        await agent.close()
        assert witness.generations == [1, 2]  # a copy taken while it ran is older

        again = await open_agent(store, _config(emulator, installed), _host(session, witness, told))
        assert again.verification_code == code  # the stored identity, never a new one
        assert told[-1].restored is False
        await again.close()
    assert witness.generations == [1, 2, 3, 4]
    keys, _ = await stores.get(installed.agent_id).load_data()
    assert keys[GENERATION_KEY] == 4
    stores.close_now()


async def test_a_restore_is_told_before_the_first_token_fails(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    """The restore and its trust loss reach the host even when Pacerelle then refuses: the
    start committed the re-keyed identity and the reverified book, so the next start finds
    nothing to tell (the repair would be lost if it were told only after the token)."""
    installed = await emulator.install()
    stores = AgentStores(StoreLocation(tmp_path / "records", tmp_path), to_thread)
    store = stores.get(installed.agent_id)
    await install_agent(store, _installation(installed), emulator.base_url)
    witness, told = Witness(), []
    async with aiohttp.ClientSession() as session:
        agent = await open_agent(store, _config(emulator, installed), _host(session, witness, told))
        await agent.close()
        witness.generations.append(50)  # a newer state was written since: this is older
        await emulator.faults(runtime_token_status=503)
        with pytest.raises(PacerelleError):
            await open_agent(store, _config(emulator, installed), _host(session, witness, told))
    assert told[-1].restored is True
    assert told[-1].trust_loss is TrustLoss.RESTORED
    await store.close()
    stores.close_now()


async def test_a_store_without_its_installation_is_refused(tmp_path: Path) -> None:
    stores = AgentStores(StoreLocation(tmp_path / "records", tmp_path), to_thread)
    store = stores.get("agt_none")
    await store.create({"generation": 3})
    told: list[Opening] = []
    config = AgentConfig("agt_none", "usr", "conv", "http://127.0.0.1:9")
    async with aiohttp.ClientSession() as session:
        with pytest.raises(StoreError) as raised:
            await open_agent(store, config, _host(session, Witness(), told))
    assert raised.value.problem is StoreProblem.CORRUPT
    assert told == []  # nothing decided, nothing committed
    assert not (await store.load_data())[1]  # still no identity
    await store.close()
    stores.close_now()
