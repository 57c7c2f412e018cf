"""The agent's identity is made once: only for a store that never had one, and published only
once the store holds it (client/agent/identity.py).

Through Home Assistant, the real store and the running emulator: the save of a new identity
fails (a disk fault), so set-up fails, the store still has no identity and the relay was told
nothing; the retry makes one identity, and it is the one the relay publishes and every later
start reads back. The client's rule on its own: a stored identity is never replaced, a
restored one is re-keyed, a new one is not.
"""

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client import (
    AgentHooks,
)
from custom_components.pacerelle.client.agent.identity import starting_data
from custom_components.pacerelle.client.agent.restore import RESTORE_REKEYED_PREKEYS
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.agent import add_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until


async def _stored(hass: HomeAssistant, agent_id: str) -> AgentData | None:
    return AgentData.from_document(await agent_store(hass, agent_id).load())


async def test_a_failed_save_of_a_new_identity_leaves_none_and_the_retry_makes_one(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    commit = RecordStore.commit
    failed: list[AgentData] = []

    def disk_fault_on_the_first_identity(
        store: RecordStore, extra: dict[str, Any], data: AgentData | None
    ) -> int:
        if data is not None and store.data is None and not failed:
            failed.append(data)
            raise sqlite3.OperationalError("disk I/O error")
        return commit(store, extra, data)

    monkeypatch.setattr(RecordStore, "commit", disk_fault_on_the_first_identity)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert len(failed) == 1
    assert await _stored(hass, installed.agent_id) is None  # no identity kept
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["bundle_published"] is False  # and none published

    monkeypatch.undo()
    assert await hass.config_entries.async_reload(entry.entry_id)
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    code = runtime.status.verification_code
    lost = failed[0].signal.prekeys.identity_key
    assert runtime.agent.data.signal.prekeys.identity_key != lost  # made again, not reused
    status = await emulator.wait_agent(installed.agent_id, lambda s: s["bundle_published"])
    assert status["verification_code"] == code  # the relay publishes the stored identity
    assert await hass.config_entries.async_unload(entry.entry_id)
    stored = await _stored(hass, installed.agent_id)
    assert stored is not None
    assert stored.signal.prekeys.identity_key == runtime.agent.data.signal.prekeys.identity_key

    # Every later start reads that identity back: the relay never sees it change.
    assert await hass.config_entries.async_setup(entry.entry_id)
    await wait_until(lambda: entry.runtime_data.status.state is ConnectionState.CONNECTED)
    assert entry.runtime_data.status.verification_code == code
    changed = await emulator.admin("GET", "/events?kind=agent_identity_changed")
    assert changed == []
    assert await hass.config_entries.async_unload(entry.entry_id)


class _Store:
    """A store that keeps what it is given (the unit tests of the decision alone)."""

    def __init__(self, commits: list[AgentData], fails: bool = False) -> None:
        self.commits, self.fails = commits, fails

    async def commit(
        self,
        extra: dict[str, Any],
        data: AgentData,
        bound: Callable[[AgentData], AgentData] | None = None,
    ) -> AgentData:
        if self.fails:
            raise OSError("disk full")
        assert extra == {"installation": {"token": "t"}}
        self.commits.append(bound(data) if bound is not None else data)
        return self.commits[-1]

    def mark(self, mark: str, trusted: bool) -> None:
        raise AssertionError("nothing is handed over before the start")


def _hooks() -> AgentHooks:
    async def run_blocking(function: Callable[[], Any]) -> Any:
        return function()

    return AgentHooks(run_blocking=run_blocking, deliver=lambda _r: None)


async def test_the_client_decides_new_kept_or_rekeyed() -> None:
    extra = {"installation": {"token": "t"}}
    commits: list[AgentData] = []
    hooks, store = _hooks(), _Store(commits)

    made = await starting_data(None, restored=True, hooks=hooks, store=store, extra=extra)
    assert commits == [made]  # committed before it is returned; nothing to re-key
    held = made.signal.prekeys.one_time_prekeys

    stored = AgentData(AgentSignalState.new())
    assert (
        await starting_data(stored, restored=False, hooks=hooks, store=store, extra=extra) is stored
    )
    assert commits == [made]  # a stored identity is kept as it is: no commit

    rekeyed = await starting_data(stored, restored=True, hooks=hooks, store=store, extra=extra)
    assert commits[-1] is rekeyed
    prekeys = rekeyed.signal.prekeys
    assert prekeys.identity_key == stored.signal.prekeys.identity_key  # the same identity
    added = len(prekeys.one_time_prekeys) - len(stored.signal.prekeys.one_time_prekeys)
    assert added == RESTORE_REKEYED_PREKEYS
    assert len(held) < len(prekeys.one_time_prekeys)


async def test_a_failed_commit_returns_no_identity() -> None:
    store = _Store([], fails=True)
    with pytest.raises(OSError, match="disk full"):
        await starting_data(
            None, restored=False, hooks=_hooks(), store=store, extra={"installation": {}}
        )
