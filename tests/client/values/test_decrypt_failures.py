"""A restored (older) agent state: failures are counted and reported, a new session heals it.

Through the running emulator and its reference peers: the agent's store is copied, the
conversation moves on, the old copy is put back; the person's next messages fail to
decrypt -> `pacerelle_decryption_failed` events, the sensor's count, a repair issue; the
person's device starts a new session -> the issue clears, the count resets, messages flow
both ways again.
"""

import copy
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import issue_registry as ir
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pacerelle.client.agent.generation import GENERATION_KEY
from custom_components.pacerelle.client.limits import MAX_DECRYPT_FAILURE_DEVICES
from custom_components.pacerelle.client.signal.errors import SignalErrorKind
from custom_components.pacerelle.client.values.decrypt_failures import (
    STALLED_RUN,
    DecryptFailures,
    DecryptionOutcome,
    DeviceKey,
)
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.diagnostics import async_get_config_entry_diagnostics
from custom_components.pacerelle.events import EVENT_DECRYPTION_FAILED
from custom_components.pacerelle.issues.markdown import markdown_text
from custom_components.pacerelle.issues.runtime import decryption_stalled_id
from custom_components.pacerelle.store.agent_store import agent_store
from custom_components.pacerelle.store.generation import WITNESS_KEY
from tests.helpers.agent import add_entry, connected_entry
from tests.helpers.emulator import EmulatorHandle, Installed
from tests.helpers.runtime import wait_until

DEVICE = DeviceKey("human-1", "conversation-1", "1")
EVENT_FIELDS = {
    "entry_id",
    "agent_id",
    "sender_id",
    "sender_device_id",
    "conversation_id",
    "reason",
    "at",
}

HOSTILE_OWNER = "usr_[verify](//evil.example)"


def test_a_run_from_a_known_device_stalls_and_only_a_new_session_clears_it() -> None:
    failures = DecryptFailures()
    for n in range(1, STALLED_RUN):
        counts = failures.record(DecryptionOutcome(DEVICE, n, "invalid_mac", had_session=True))
        assert (counts.total, counts.run, counts.stalled) == (n, n, False)
    counts = failures.record(DecryptionOutcome(DEVICE, 9, "invalid_mac", had_session=True))
    assert (counts.run, counts.stalled, counts.last_reason) == (STALLED_RUN, True, "invalid_mac")
    # An ordinary message that decrypts ends the run but not the stall.
    counts = failures.record(DecryptionOutcome(DEVICE, 10))
    assert (counts.total, counts.run, counts.stalled) == (STALLED_RUN, 0, True)
    counts = failures.record(DecryptionOutcome(DEVICE, 11, new_session=True))
    assert (counts.total, counts.stalled, failures.total, failures.devices) == (0, False, 0, {})


def test_failures_of_a_device_never_met_do_not_stall() -> None:
    failures = DecryptFailures()
    for at in range(STALLED_RUN * 2):
        counts = failures.record(DecryptionOutcome(DEVICE, at, "no_session"))
    assert (counts.total, counts.stalled) == (STALLED_RUN * 2, False)


def test_devices_invented_by_a_relay_stay_bounded() -> None:
    failures = DecryptFailures()
    for n in range(MAX_DECRYPT_FAILURE_DEVICES * 2):
        device = DeviceKey("human-1", "conversation-1", str(n + 1))
        failures.record(DecryptionOutcome(device, n, "invalid_message"))
    assert len(failures.devices) == MAX_DECRYPT_FAILURE_DEVICES
    assert (
        min(int(key.device_id) for key in failures.devices) == MAX_DECRYPT_FAILURE_DEVICES + 1
    )  # the newest


async def _copy(hass: HomeAssistant, source: Path, target: Path) -> None:
    def copy() -> None:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)

    await hass.async_add_executor_job(copy)


async def _exchange(
    hass: HomeAssistant, emulator: EmulatorHandle, installed: Installed, entry: MockConfigEntry
) -> None:
    """One message each way, each read by the other side."""
    runtime = entry.runtime_data
    before = len(await emulator.inbox(installed.conversation_id))
    handled = len(runtime.agent.data.history.requests)
    message_id = await emulator.send(installed.conversation_id, text="ping")
    await wait_until(lambda: len(runtime.agent.data.history.requests) == handled + 1)
    await runtime.agent.send_text("pong", source_message_id=message_id)
    inbox = await emulator.wait_inbox(installed.conversation_id, before + 1)
    assert inbox[-1]["text"] == "pong"


async def test_restored_older_state_is_reported_and_a_new_session_heals_it(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """The owner's id, as the relay names him, is made to be read as a link: the repair's
    description shows it as text."""
    installed = await emulator.install(user_id=HOSTILE_OWNER)
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-pacerelle"))
    failed = async_capture_events(hass, EVENT_DECRYPTION_FAILED)
    async with connected_entry(hass, entry):
        await _exchange(hass, emulator, installed, entry)
        await _copy(hass, store, backup)  # the backup, taken mid-conversation
        for _ in range(2):
            await _exchange(hass, emulator, installed, entry)
    await _copy(hass, backup, store)  # the restore

    issues = ir.async_get(hass)
    issue_id = decryption_stalled_id(
        entry.entry_id, DeviceKey(installed.owner_id, installed.conversation_id, "1")
    )
    sensor = er.async_get(hass).async_get_entity_id(
        "sensor", DOMAIN, f"{entry.entry_id}_decryption_failures"
    )
    assert sensor is not None
    secrets: list[str] = []
    restored_id = f"store_restored_{entry.entry_id}"
    assert issues.async_get_issue(DOMAIN, restored_id) is None
    async with connected_entry(hass, entry) as runtime:
        # Prevention: seen at start-up, before any message failed (store/generation.py).
        restored = issues.async_get_issue(DOMAIN, restored_id)
        assert restored is not None
        assert restored.translation_key == "store_restored"
        assert not failed
        for n in range(STALLED_RUN):
            text = f"lost message {n}"
            secrets.append(text)
            await emulator.send(installed.conversation_id, text=text)
            await wait_until(lambda n=n: len(failed) == n + 1)
        event = failed[-1].data
        assert set(event) == EVENT_FIELDS
        # Short fields only: ids, an error kind (an enum, never the relay's text), a time.
        assert all(isinstance(value, str) and len(value) < 100 for value in event.values())
        assert event["reason"] in {kind.value for kind in SignalErrorKind}
        assert datetime.fromisoformat(event["at"]).tzinfo is not None
        assert (event["sender_id"], event["sender_device_id"], event["conversation_id"]) == (
            installed.owner_id,
            "1",
            installed.conversation_id,
        )
        assert event["entry_id"] == entry.entry_id
        assert event["reason"] == "invalid_mac"
        assert runtime.agent.data.history.requests[-1].request.text == "ping"  # none handed over
        await wait_until(lambda: issues.async_get_issue(DOMAIN, issue_id) is not None)
        issue = issues.async_get_issue(DOMAIN, issue_id)
        assert issue is not None
        assert issue.severity is ir.IssueSeverity.ERROR
        assert issue.translation_key == "decryption_stalled"
        placeholders = issue.translation_placeholders or {}
        assert placeholders["peer_id"] == installed.owner_id  # the title: plain text
        assert placeholders["peer"] == markdown_text(HOSTILE_OWNER)  # the description
        assert "](" not in placeholders["peer"]
        assert len(placeholders["device_code"].split(" ")) == 16
        state = hass.states.get(sensor)
        assert state is not None
        assert state.state == str(STALLED_RUN)

        diagnostics = await async_get_config_entry_diagnostics(hass, entry)
        (counts,) = diagnostics["decryption_failures"]
        assert (counts["total"], counts["run"]) == (STALLED_RUN, STALLED_RUN)
        assert counts["stalled"] is True
        assert counts["last_reason"] == "invalid_mac"
        assert counts["sender_id"] == "person_1"  # a label, never the id
        # Neither what was written nor the ciphertext reaches the event or the diagnostics.
        for record in (*(e.data for e in failed), diagnostics):
            dumped = repr(record)
            assert not any(secret in dumped for secret in secrets)
            assert "payload" not in dumped

        # The person's device starts over: a PreKey message that decrypts.
        reset = f"/conversations/{installed.conversation_id}/devices/1/reset"
        await emulator.admin("POST", reset)
        await _exchange(hass, emulator, installed, entry)
        await wait_until(lambda: issues.async_get_issue(DOMAIN, issue_id) is None)
        assert issues.async_get_issue(DOMAIN, restored_id) is None
        assert runtime.decryption_failures.total == 0
        await wait_until(lambda: (s := hass.states.get(sensor)) is not None and s.state == "0")
        await _exchange(hass, emulator, installed, entry)
        assert len(failed) == STALLED_RUN


async def test_restarts_raise_nothing_and_a_full_restore_is_left_to_the_failures(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    """The witness is in the same .storage: restoring both together is not seen at start."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = Path(hass.config.path(".storage", DOMAIN))
    backup = Path(hass.config.path("backup-of-storage"))
    restored_id = f"store_restored_{entry.entry_id}"
    issues = ir.async_get(hass)
    async with connected_entry(hass, entry):
        await _exchange(hass, emulator, installed, entry)
    generation = (await agent_store(hass, installed.agent_id).load())[GENERATION_KEY]
    assert generation == 2  # one at start, one at stop
    await _copy(hass, store, backup / "store")
    witness = copy.deepcopy(hass_storage[WITNESS_KEY])  # HA's storage, in memory in tests
    async with connected_entry(hass, entry):  # an ordinary restart
        assert issues.async_get_issue(DOMAIN, restored_id) is None
        await _exchange(hass, emulator, installed, entry)
    await _copy(hass, backup / "store", store)  # a full restore: both files together
    hass_storage[WITNESS_KEY] = witness
    async with connected_entry(hass, entry):
        assert issues.async_get_issue(DOMAIN, restored_id) is None
