"""The agent's encrypted store inside Home Assistant's configuration directory."""

import base64
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state import versions
from custom_components.pacerelle.client.state.errors import StoreError, StoreProblem
from custom_components.pacerelle.client.state.versions import STORE_VERSION, migrate
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.store.agent_store import agent_store

INSTALLATION = {"token": "inst-secret", "agent_id": "agent-1"}


async def test_created_saved_loaded_removed(hass: HomeAssistant) -> None:
    store = agent_store(hass, "agent-1")
    assert not await store.exists()
    await store.create({"installation": INSTALLATION})
    assert await store.exists()
    assert await store.load() == {"installation": INSTALLATION, "version": STORE_VERSION}
    data = AgentData(await hass.async_add_executor_job(AgentSignalState.new))
    await store.commit({"installation": INSTALLATION}, data)
    assert (await store.load())["signal"] == data.sections()["signal"]
    agent_store(hass, "agent-1").records.close()  # read again from the disk
    assert (await store.load())["signal"] == data.sections()["signal"]
    directory = Path(hass.config.path(".storage", "pacerelle"))
    identity = data.signal.prekeys.identity
    for path in directory.iterdir():
        content = path.read_bytes()
        assert b"inst-secret" not in content
        assert b"agent-1" not in content
        for secret in (identity.private, identity.public):
            assert secret not in content
            assert base64.b64encode(secret) not in content
    await store.remove()
    assert not await store.exists()
    assert list(directory.iterdir()) == []


async def test_create_never_overwrites_an_identity(hass: HomeAssistant) -> None:
    store = agent_store(hass, "agent-1")
    await store.create({"installation": INSTALLATION})
    with pytest.raises(FileExistsError):
        await store.create({"installation": {"token": "other"}})
    assert (await store.load())["installation"] == INSTALLATION


async def test_missing_store_is_reported(hass: HomeAssistant) -> None:
    with pytest.raises(StoreError) as err:
        await agent_store(hass, "nobody").load()
    assert err.value.problem is StoreProblem.KEY_MISSING


def test_migrations_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "STORE_VERSION", 3)
    monkeypatch.setattr(
        versions,
        "MIGRATIONS",
        {
            1: lambda d: {**d, "steps": [*d["steps"], 1]},
            2: lambda d: {**d, "steps": [*d["steps"], 2]},
        },
    )
    assert migrate({"version": 1, "steps": []}) == {"version": 3, "steps": [1, 2]}


@pytest.mark.parametrize("version", [None, 0, "1", STORE_VERSION + 1])
def test_unknown_versions_are_refused(version: object) -> None:
    with pytest.raises(StoreError) as err:
        migrate({"version": version})
    assert err.value.problem is StoreProblem.CORRUPT
