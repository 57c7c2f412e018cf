"""After a restore, the one-time prekeys the newer state published are replaced.

Through Home Assistant, the running emulator and its reference peers: the agent's store is
copied (the backup); the agent goes on and publishes a one-time prekey the copy never
knew; the relay hands the older ones out (people who fetched the bundle); the copy is put
back. A new phone's first message is sealed to the newest key in the relay's pool: it must
decrypt, so the restored agent has published a key of its own under that id.
"""

import logging
import shutil
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.agent_restore import RESTORE_REKEYED_PREKEYS
from custom_components.pacerelle.client.signal import prekeys as prekeys_module
from custom_components.pacerelle.const import DOMAIN
from tests.emulator.human_side import _take_bundle
from tests.emulator_fixtures import EmulatorHandle
from tests.runtime_harness import add_entry, connected_entry, wait_until


async def _copy(hass: HomeAssistant, source: Path, target: Path) -> None:
    def copy() -> None:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)

    await hass.async_add_executor_job(copy)


async def test_a_new_phone_after_a_restore_starts_a_session(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Refill after every key used (instead of below 20 of 50): one new session is enough
    # for the agent to publish a key after the backup.
    monkeypatch.setattr(
        prekeys_module, "ONE_TIME_PREKEY_LOW_WATER", prekeys_module.ONE_TIME_PREKEY_TARGET
    )
    installed = await emulator.install()
    owner, conversation = installed.owner_id, installed.conversation_id
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    keys = emulator.emulator.state.keys_for(installed.agent_id)
    async with connected_entry(hass, entry) as runtime:
        await _copy(hass, store, backup)  # the backup
        known = {p.prekey_id for p in runtime.agent.data.signal.prekeys.one_time_prekeys}
        await emulator.admin("POST", f"/users/{owner}/devices", {"device_id": "2"})
        await emulator.send(conversation, text="from phone 2", device_id="2")
        # The session used a key; the agent published a new one the backup never knew.
        await wait_until(lambda: any(p["prekey_id"] not in known for p in keys.one_time_prekeys))
        while keys.one_time_prekeys[0]["prekey_id"] in known:
            _take_bundle(keys)  # the relay hands the older keys out, oldest first
    newest = keys.one_time_prekeys[0]["prekey_id"]
    assert newest not in known
    await _copy(hass, backup, store)  # the restore

    with caplog.at_level(logging.WARNING):
        async with connected_entry(hass, entry) as runtime:
            await emulator.admin("POST", f"/users/{owner}/devices", {"device_id": "3"})
            await emulator.send(conversation, text="from phone 3", device_id="3")
            agent = runtime.agent
            # The backup's history is empty: phone 2 wrote after it.
            await wait_until(lambda: len(agent.data.history.requests) == 1)
            handled = agent.data.history.requests[-1].request
            assert (handled.text, handled.sender_device_id) == ("from phone 3", "3")
            assert runtime.decryption_failures.total == 0
    assert f"{RESTORE_REKEYED_PREKEYS} one-time prekeys" in caplog.text
