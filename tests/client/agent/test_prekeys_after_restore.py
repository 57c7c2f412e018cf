"""After a restore, the one-time prekeys the newer state published are replaced.

Through Home Assistant, the running emulator and its reference peers: the agent's store is
copied (the backup); the agent goes on and publishes a one-time prekey the copy never
knew; the relay hands the older ones out (people who fetched the bundle); the copy is put
back. A new phone's first message is sealed to the newest key in the relay's pool: it must
decrypt, so the restored agent has published a key of its own under that id.

Two restores: the agent's folder alone (seen at start-up, store/generation.py), and all of
Home Assistant's storage with the witness (seen only when the first message names a key
the agent does not hold: that one is lost, the next phone's is not).
"""

import contextlib
import copy
import logging
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import RESTORE_REKEYED_PREKEYS
from custom_components.pacerelle.client.signal import prekeys as prekeys_module
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from custom_components.pacerelle.store.generation import WITNESS_KEY
from tests.emulator.human_side import _take_bundle
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle, Installed
from tests.helpers.runtime import wait_until


async def _copy(hass: HomeAssistant, source: Path, target: Path) -> None:
    def copy_tree() -> None:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)

    await hass.async_add_executor_job(copy_tree)


@pytest.fixture(autouse=True)
def refill_after_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refill after every key used (instead of below 20 of 50): one new session is enough
    for the agent to publish a key after the backup."""
    monkeypatch.setattr(
        prekeys_module, "ONE_TIME_PREKEY_LOW_WATER", prekeys_module.ONE_TIME_PREKEY_TARGET
    )


async def _new_phone(emulator: EmulatorHandle, installed: Installed, device: str) -> None:
    """A new phone of the owner writes its first message (a new session)."""
    await emulator.admin("POST", f"/users/{installed.owner_id}/devices", {"device_id": device})
    await emulator.send(installed.conversation_id, text=f"from phone {device}", device_id=device)


async def _lost_state(
    emulator: EmulatorHandle, installed: Installed, runtime: Any, phones: int
) -> set[int]:
    """After the backup: `phones` new sessions, each refilled with a key the backup never
    knew; then the relay hands the backup's keys out (people who fetched the bundle), so
    its pool holds only the new ones. The ids the backup knew."""
    keys = emulator.emulator.state.keys_for(installed.agent_id)
    known = {p.prekey_id for p in runtime.agent.data.signal.prekeys.one_time_prekeys}
    for n in range(phones):
        await _new_phone(emulator, installed, str(10 + n))
    await wait_until(
        lambda: sum(p["prekey_id"] not in known for p in keys.one_time_prekeys) == phones
    )
    while keys.one_time_prekeys[0]["prekey_id"] in known:
        _take_bundle(keys)  # oldest first
    assert all(p["prekey_id"] not in known for p in keys.one_time_prekeys)
    return known


def _texts(runtime: Any) -> list[str]:
    return [handled.request.text for handled in runtime.agent.data.history.requests]


async def test_a_new_phone_after_a_restore_starts_a_session(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    async with connected_entry(hass, entry) as runtime:
        await _copy(hass, store, backup)  # the backup
        await _lost_state(emulator, installed, runtime, phones=1)
    await _copy(hass, backup, store)  # the restore of the agent's folder alone

    with caplog.at_level(logging.WARNING):
        async with connected_entry(hass, entry) as runtime:
            await _new_phone(emulator, installed, "3")
            # The backup's history is empty: the phones wrote after it.
            await wait_until(lambda: _texts(runtime) == ["from phone 3"])
            assert runtime.agent.data.history.requests[-1].request.sender_device_id == "3"
            assert runtime.decryption_failures.total == 0
    assert f"{RESTORE_REKEYED_PREKEYS} one-time prekeys" in caplog.text


async def test_after_a_full_restore_the_second_new_phone_starts_a_session(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-storage"))
    async with connected_entry(hass, entry) as runtime:
        await _copy(hass, store, backup)  # the backup, witness included
        witness = copy.deepcopy(hass_storage[WITNESS_KEY])  # HA's storage: in memory in tests
        await _lost_state(emulator, installed, runtime, phones=2)
    await _copy(hass, backup, store)  # a full restore: both together, not seen at start
    hass_storage[WITNESS_KEY] = witness

    async with connected_entry(hass, entry) as runtime:
        await _new_phone(emulator, installed, "3")  # gets a key the restored agent lacks
        await wait_until(lambda: runtime.decryption_failures.total == 1)
        with contextlib.suppress(TimeoutError):  # (code without the fix: phone 4 then fails)
            await wait_until(
                lambda: runtime.agent.data.published_prekeys >= _rekeyed(runtime), within=5
            )
        await _new_phone(emulator, installed, "4")
        await wait_until(lambda: _texts(runtime) == ["from phone 4"])


def _rekeyed(runtime: Any) -> set[int]:
    """Held keys: once more than the 50 of the backup, the re-keyed ones are among them."""
    held = {p.prekey_id for p in runtime.agent.data.signal.prekeys.one_time_prekeys}
    return held if len(held) > prekeys_module.ONE_TIME_PREKEY_TARGET else {-1}


async def test_a_restore_whose_first_start_fails_keeps_its_new_prekeys(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """The start that finds a restore advances the witness: the next start does not find it
    again, so the new prekeys are saved before anything that can fail (the first token)."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    async with connected_entry(hass, entry) as runtime:
        await _copy(hass, store, backup)
        held = len(runtime.agent.data.signal.prekeys.one_time_prekeys)
    await _copy(hass, backup, store)  # the agent's folder put back on its own

    await emulator.faults(runtime_token_status=503)  # the relay is down at that start
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    stored = AgentData.from_document(await agent_store(hass, installed.agent_id).load())
    assert stored is not None
    assert len(stored.signal.prekeys.one_time_prekeys) == held + RESTORE_REKEYED_PREKEYS
    await emulator.faults(runtime_token_status=None)


async def test_a_failed_save_of_the_new_prekeys_is_retried_at_the_next_start(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The witness moves past a restore only once the new prekeys are saved: a disk fault
    on that save leaves the restore for the next start to find again."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    async with connected_entry(hass, entry) as runtime:
        await _copy(hass, store, backup)
        held = len(runtime.agent.data.signal.prekeys.one_time_prekeys)
    await _copy(hass, backup, store)

    commit = RecordStore.commit
    failed: list[int] = []

    def disk_fault_on_the_new_prekeys(
        records: RecordStore, extra: dict[str, Any], data: AgentData | None
    ) -> int:
        if data is not None and len(data.signal.prekeys.one_time_prekeys) > held and not failed:
            failed.append(len(data.signal.prekeys.one_time_prekeys))
            raise sqlite3.OperationalError("disk I/O error")
        return commit(records, extra, data)

    monkeypatch.setattr(RecordStore, "commit", disk_fault_on_the_new_prekeys)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert failed == [held + RESTORE_REKEYED_PREKEYS]
    monkeypatch.undo()

    assert await hass.config_entries.async_reload(entry.entry_id)
    prekeys = entry.runtime_data.agent.data.signal.prekeys.one_time_prekeys
    assert len(prekeys) == held + RESTORE_REKEYED_PREKEYS  # the next start re-keyed
    assert await hass.config_entries.async_unload(entry.entry_id)
