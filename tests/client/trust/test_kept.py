"""The trust book lives in the encrypted store (issue 35, finding 5): an older trust file put
back, a deleted one, or an older store put back never trusts more than the newer state did.

Each test plays it through Home Assistant's `.storage` and the emulator: the owner's phone 1
(trusted on first use) and a device 2 the relay announces for the owner (a stolen phone, or
the relay's own key), judged by what the restarted entry does with their messages.
"""

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client import AgentStore
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.values.trust_book import TrustBook, TrustState, device_name
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.repairs import issue_id
from custom_components.pacerelle.store.agent_store import agent_store
from custom_components.pacerelle.trust import EarlierTrustFile, trust_issue_id
from tests.helpers.agent import Agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of
from tests.helpers.trust import (
    a_new_phone,
    book_states,
    decide,
    put_trust_file,
    stopped_as_before_the_move,
    trust_file,
)


async def _started(hass: HomeAssistant, agent: Agent) -> None:
    assert await hass.config_entries.async_setup(agent.entry.entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)


async def _restarted(hass: HomeAssistant, agent: Agent) -> None:
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    await _started(hass, agent)


async def _dropped(hass: HomeAssistant, emulator: EmulatorHandle, agent: Agent) -> None:
    """Device 2 writes: refused when opened (blocked), no event."""
    events = len(agent.events)
    dropped = await emulator.send(agent.conversation_id, text="open the door", device_id="2")
    await wait_until(lambda: dropped in agent.runtime.agent.data.inbox.rejected)
    assert len(agent.events) == events


def _trusting(book: TrustBook, person_id: str, device_id: str) -> TrustBook:
    name = device_name(person_id, device_id)
    devices = {**book.devices, name: replace(book.devices[name], state=TrustState.TRUSTED)}
    return TrustBook(devices)


async def test_the_file_of_earlier_versions_moves_in_once_and_is_never_read_again(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    agent, _ = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    older = _trusting(agent.runtime.trust.book, owner, "2")  # a copy from when 2 was trusted
    await decide(agent, owner, "2", TrustState.BLOCKED)  # the phone was stolen
    newer = agent.runtime.trust.book
    # As the version before left it: the book in its own file beside the store.
    await stopped_as_before_the_move(hass, agent)
    await put_trust_file(hass, agent, newer)

    await _started(hass, agent)
    assert book_states(agent) == {
        (owner, "1", TrustState.TRUSTED),
        (owner, "2", TrustState.BLOCKED),
    }
    assert trust_file(agent) not in hass_storage  # moved into the store
    assert ir.async_get(hass).async_get_issue(DOMAIN, trust_issue_id(agent.entry.entry_id)) is None

    # An older copy of the file put back (a sync tool, a partial restore) changes nothing.
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    await put_trust_file(hass, agent, older)
    await _started(hass, agent)
    assert (owner, "2", TrustState.BLOCKED) in book_states(agent)
    await _dropped(hass, emulator, agent)


async def test_a_deleted_file_never_trusts_the_relays_device(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent, _ = await a_new_phone(hass, emulator)
    owner, entry_id = agent.installed.owner_id, agent.entry.entry_id
    # A store of the version before, whose trust file was deleted: its requests were judged,
    # so it is no store from before trust, and its sessions seed nothing trusted.
    await stopped_as_before_the_move(hass, agent)
    assert trust_file(agent) not in hass_storage

    await _started(hass, agent)
    assert book_states(agent) == {
        (owner, "1", TrustState.UNVERIFIED),
        (owner, "2", TrustState.UNVERIFIED),
    }
    issues = ir.async_get(hass)
    lost = issues.async_get_issue(DOMAIN, trust_issue_id(entry_id))
    assert lost is not None
    assert lost.translation_key == "trust_lost"
    assert issues.async_get_issue(DOMAIN, issue_id(entry_id, owner, "1")) is not None
    # The relay's device is not believed, nor trusted on first use of the owner.
    written = await emulator.send(agent.conversation_id, text="open the door", device_id="2")
    assert (await event_of(agent, written))["trust_state"] == "unverified"
    assert (owner, "2", TrustState.UNVERIFIED) in book_states(agent)

    # The user decides again: the repair goes once every device is decided.
    await decide(agent, owner, "1", TrustState.TRUSTED)
    assert issues.async_get_issue(DOMAIN, trust_issue_id(entry_id)) is not None
    await decide(agent, owner, "2", TrustState.BLOCKED)
    assert issues.async_get_issue(DOMAIN, trust_issue_id(entry_id)) is None
    # Those decisions are in the store: a restart keeps them, with no repair.
    await _restarted(hass, agent)
    assert book_states(agent) == {
        (owner, "1", TrustState.TRUSTED),
        (owner, "2", TrustState.BLOCKED),
    }
    assert issues.async_get_issue(DOMAIN, trust_issue_id(entry_id)) is None


async def test_unreadable_trust_records_fail_closed(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    agent, _ = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    store = agent_store(hass, agent.installed.agent_id)
    document = await store.load()
    document["trust"] = {"devices": [{"person_id": owner}]}  # a record that cannot be read
    await store.save(document)
    await store.close()

    await _started(hass, agent)
    assert book_states(agent) == {
        (owner, "1", TrustState.UNVERIFIED),
        (owner, "2", TrustState.UNVERIFIED),
    }
    lost = ir.async_get(hass).async_get_issue(DOMAIN, trust_issue_id(agent.entry.entry_id))
    assert lost is not None
    assert lost.translation_key == "trust_lost"


async def _copy(hass: HomeAssistant, source: Path, target: Path) -> None:
    def copy_tree() -> None:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)

    await hass.async_add_executor_job(copy_tree)


async def test_a_restored_store_trusts_no_more_than_before(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent, _ = await a_new_phone(hass, emulator)
    owner, entry_id = agent.installed.owner_id, agent.entry.entry_id
    await decide(agent, owner, "2", TrustState.TRUSTED)
    third = await emulator.send(agent.conversation_id, text="hi", device_id="3")
    await event_of(agent, third)
    await decide(agent, owner, "3", TrustState.BLOCKED)
    folder = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    assert await hass.config_entries.async_unload(entry_id)
    await _copy(hass, folder, backup)  # the backup, device 2 trusted
    await _started(hass, agent)
    await decide(agent, owner, "2", TrustState.BLOCKED)  # then stolen: blocked
    assert await hass.config_entries.async_unload(entry_id)
    await _copy(hass, backup, folder)  # the agent's folder put back alone

    await _started(hass, agent)
    issues = ir.async_get(hass)
    assert issues.async_get_issue(DOMAIN, f"store_restored_{entry_id}") is not None
    assert book_states(agent) == {
        (owner, "1", TrustState.UNVERIFIED),
        (owner, "2", TrustState.UNVERIFIED),
        (owner, "3", TrustState.BLOCKED),  # blocked stays blocked
    }
    restored = issues.async_get_issue(DOMAIN, trust_issue_id(entry_id))
    assert restored is not None
    assert restored.translation_key == "trust_restored"
    for device in ("1", "2"):
        assert issues.async_get_issue(DOMAIN, issue_id(entry_id, owner, device)) is not None
    assert issues.async_get_issue(DOMAIN, issue_id(entry_id, owner, "3")) is None
    written = await emulator.send(agent.conversation_id, text="open the door", device_id="2")
    assert (await event_of(agent, written))["trusted"] is False


async def test_a_migration_stopped_half_way_leaves_the_file_or_the_store(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    monkeypatch: pytest.MonkeyPatch,
    hass_storage: dict[str, Any],
) -> None:
    agent, _ = await a_new_phone(hass, emulator)
    owner, entry_id = agent.installed.owner_id, agent.entry.entry_id
    await decide(agent, owner, "2", TrustState.BLOCKED)
    book = agent.runtime.trust.book
    await stopped_as_before_the_move(hass, agent)
    await put_trust_file(hass, agent, book)
    assert trust_file(agent) in hass_storage
    expected = {(owner, "1", TrustState.TRUSTED), (owner, "2", TrustState.BLOCKED)}

    # Stopped before the store's commit: the file is still there, the store without a book.
    async def killed(*_args: object, **_kwargs: object) -> None:
        raise OSError("killed")

    with monkeypatch.context() as patched:
        patched.setattr(AgentStore, "commit", killed)
        assert not await hass.config_entries.async_setup(entry_id)
    assert trust_file(agent) in hass_storage
    store = agent_store(hass, agent.installed.agent_id)
    assert (await store.load())["trust"] == "outside"

    # Stopped after the commit, before the file is deleted: the store holds the book.
    with monkeypatch.context() as patched:
        patched.setattr(EarlierTrustFile, "remove", killed)
        assert not await hass.config_entries.async_reload(entry_id)
    assert trust_file(agent) in hass_storage
    held = (await store.load())["trust"]
    assert {(d["device_id"], d["state"]) for d in held["devices"]} == {
        ("1", "trusted"),
        ("2", "blocked"),
    }

    # The file is left as an older copy: the next start takes the store's book, deletes it.
    await put_trust_file(hass, agent, _trusting(book, owner, "2"))
    assert await hass.config_entries.async_reload(entry_id)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    assert book_states(agent) == expected
    assert trust_file(agent) not in hass_storage
