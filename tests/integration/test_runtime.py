"""The runtime inside Home Assistant, against the running emulator: events, store, repairs."""

import base64
import fcntl
import json
import logging
import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.repairs import issue_id as trust_issue_id
from custom_components.pacerelle.signals import status_signal
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.agent import add_entry, connected_entry, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until


def damage_a_row(path: str) -> None:
    """One byte of one encrypted row flipped, as a disk fault would."""
    with sqlite3.connect(path) as connection:
        table, rkey, value = connection.execute("SELECT tbl, rkey, value FROM records").fetchone()
        damaged = value[:-1] + bytes([value[-1] ^ 1])
        connection.execute(
            "UPDATE records SET value = ? WHERE tbl = ? AND rkey = ?", (damaged, table, rkey)
        )
    connection.close()


async def test_message_fires_the_event_and_the_store_keeps_everything(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    async with connected_entry(hass, entry) as runtime:
        code = runtime.status.verification_code
        assert len(code.split(" ")) == 16

        message_id = await emulator.send(installed.conversation_id, text="Is the door locked?")
        await wait_until(lambda: len(events) == 1)
        data = events[0].data
        assert data["message_id"] == message_id
        assert data["text"] == "Is the door locked?"
        assert data["sender_id"] == installed.owner_id
        assert data["sender_device_id"] == "1"
        assert data["conversation_id"] == installed.conversation_id
        assert data["agent_id"] == installed.agent_id
        assert data["entry_id"] == entry.entry_id
        await emulator.wait_agent(installed.agent_id, lambda status: status["queued"] == [])

        reply = await runtime.agent.send_text("Yes", source_message_id=message_id)
        inbox = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (inbox[0]["message_id"], inbox[0]["text"], inbox[0]["history"]) == (
            reply.message_id,
            "Yes",
            "valid",
        )
    assert entry.state is ConfigEntryState.NOT_LOADED

    # Written and read back: the same identity, the request still pending, the reply kept.
    document = await agent_store(hass, installed.agent_id).load()
    assert document["installation"]["token"] == installed.installation_token
    saved = AgentData.from_document(document)
    assert saved is not None
    assert list(saved.inbox.pending) == [message_id]
    assert saved.history.replies[-1].message_id == reply.message_id
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime = entry.runtime_data
    assert runtime.status.verification_code == code
    assert runtime.status.pending == 1
    assert runtime.status.last_message_at == saved.history.requests[-1].request.received_at
    await runtime.agent.mark_processed(message_id)
    assert runtime.status.pending == 0
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_corrupt_store_is_a_repair_issue_not_a_new_identity(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    path = hass.config.path(".storage", DOMAIN, f"{installed.agent_id}.db")
    await hass.async_add_executor_job(damage_a_row, path)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"store_{entry.entry_id}")
    assert issue is not None
    assert issue.translation_key == "store_undecryptable"
    assert issue.severity is ir.IssueSeverity.ERROR
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["bundle_published"] is False  # nothing was published for a new identity


async def test_missing_store_is_a_repair_issue(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed, create_store=False)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"store_{entry.entry_id}")
    assert issue is not None
    assert issue.translation_key == "store_key_missing"
    assert not await agent_store(hass, installed.agent_id).exists()


async def test_revocation_after_setup_starts_reauth(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    async with connected_entry(hass, entry) as runtime:
        await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
        await wait_until(lambda: runtime.status.state is ConnectionState.DISCONNECTED)
        await hass.async_block_till_done()
        flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
        assert [flow["context"]["source"] for flow in flows] == ["reauth"]


async def test_revoked_before_setup_fails_with_auth(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    await hass.async_block_till_done()
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == ["reauth"]


async def test_server_down_at_setup_retries(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    await emulator.faults(runtime_token_status=503)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY


async def test_unencrypted_development_override_and_status_signal(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plaintext only with the development override set, never from a setting."""
    monkeypatch.setenv("PACERELLE_DEVELOPMENT_PLAINTEXT", "1")
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed, options={"encrypted": True})
    events = async_capture_events(hass, EVENT_MESSAGE)
    signals: list[None] = []
    async_dispatcher_connect(hass, status_signal(entry.entry_id), lambda: signals.append(None))
    async with connected_entry(hass, entry) as runtime:
        assert signals  # connecting, connected
        message_id = await emulator.send(installed.conversation_id, text="plain", encrypted=False)
        await wait_until(lambda: len(events) == 1)
        assert events[0].data["text"] == "plain"
        await runtime.agent.send_text("plain reply", source_message_id=message_id)
        (entry_in_inbox,) = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (entry_in_inbox["encrypted"], entry_in_inbox["text"]) == (False, "plain reply")


async def test_an_identity_change_is_one_repair_the_fixable_trust_issue(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """One change, one repair: the trust issue with its fix flow, no second notice of it."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    async with connected_entry(hass, entry) as runtime:
        await emulator.send(installed.conversation_id, text="hi")
        await wait_until(lambda: runtime.status.pending == 1)
        reset = f"/conversations/{installed.conversation_id}/devices/1/reset"
        await emulator.admin("POST", reset)  # the relay's IDENTITY_CHANGED notice, then:
        await emulator.send(installed.conversation_id, text="hi again, new key")
        registry = ir.async_get(hass)
        trust_issue = trust_issue_id(entry.entry_id, installed.owner_id, "1")
        await wait_until(lambda: registry.async_get_issue(DOMAIN, trust_issue) is not None)
        await hass.async_block_till_done()
        ours = [key for key in registry.issues if key[0] == DOMAIN]
        assert ours == [(DOMAIN, trust_issue)]
        issue = registry.async_get_issue(DOMAIN, trust_issue)
        assert issue is not None
        assert issue.is_fixable
        assert issue.translation_placeholders is not None
        assert issue.translation_placeholders["state"] == "changed"


async def test_home_assistant_stop_closes_the_agent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    async with connected_entry(hass, entry) as runtime:
        hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
        await hass.async_block_till_done()
        assert runtime.status.state is ConnectionState.STOPPED
        await emulator.wait_agent(installed.agent_id, lambda status: not status["connected"])


async def test_damaged_runtime_data_is_a_corrupt_store_issue(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    store = agent_store(hass, installed.agent_id)
    await store.load()
    # A row that decrypts (the store key made it) but whose Signal state does not parse.
    records = agent_store(hass, installed.agent_id).records
    bad = orjson.dumps(["", {"format": 1}, None])
    await hass.async_add_executor_job(records.file.apply, [("prekeys", "", 0, bad)], [])
    await hass.async_add_executor_job(records.close)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"store_{entry.entry_id}")
    assert issue is not None
    assert issue.translation_key == "store_corrupt"
    # The damaged store is left for the user to restore, not overwritten.
    rows = await hass.async_add_executor_job(lambda: list(records.file.rows()))
    assert ("prekeys", 0, ["", {"format": 1}, None]) in rows


async def test_attachment_keys_stay_out_of_events_and_files_download(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    events = async_capture_events(hass, EVENT_MESSAGE)
    async with connected_entry(hass, entry) as runtime:
        content = b"\x89PNG" + bytes(range(200))
        files = [
            {"data_b64": base64.b64encode(content).decode(), "name": "a.png", "mime": "image/png"}
        ]
        message_id = await emulator.send(installed.conversation_id, text="see", attachments=files)
        await wait_until(lambda: len(events) == 1)
        (public,) = events[0].data["attachments"]
        assert set(public) == {"id", "name", "mime", "size"}
        assert (public["name"], public["mime"], public["size"]) == (
            "a.png",
            "image/png",
            len(content),
        )
        assert "key_b64" not in json.dumps(events[0].data)
        request = runtime.agent.find_request(message_id)
        assert request is not None
        assert request.attachments == ({**public},)  # the host's copy: no key either
        assert await runtime.agent.download(message_id, 0) == content


async def test_a_stop_during_an_unload_stops_once(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """Home Assistant stopping while the entry unloads: one stop, one generation step, the
    store closed, and no error logged (each used to advance a store the other had closed)."""
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    store = agent_store(hass, installed.agent_id)
    before = (await store.load_data())[0]["generation"]
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert runtime.status.state is ConnectionState.STOPPED
    assert (await store.load_data())[0]["generation"] == before + 1
    await store.close()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


async def test_a_store_held_by_another_process_is_retried_not_called_damaged(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """A second Home Assistant on the same folder holds the store's lock (flock, as the
    other process would): set-up is retried with a repair saying so; once it lets go, the
    agent starts and the repair goes."""
    agent = await start_agent(hass, emulator)
    installed, entry = agent.installed, agent.entry
    assert await hass.config_entries.async_unload(entry.entry_id)
    await agent_store(hass, installed.agent_id).close()  # ours lets go; the other takes it
    lock = Path(hass.config.path(".storage", DOMAIN, f"{installed.agent_id}.lock"))
    fd = await hass.async_add_executor_job(os.open, lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await hass.async_add_executor_job(fcntl.flock, fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert not await hass.config_entries.async_setup(entry.entry_id)
        assert entry.state is ConfigEntryState.SETUP_RETRY
        issue = ir.async_get(hass).async_get_issue(DOMAIN, f"store_{entry.entry_id}")
        assert issue is not None
        assert issue.translation_key == "store_locked"
    finally:
        await hass.async_add_executor_job(os.close, fd)
    assert await hass.config_entries.async_reload(entry.entry_id)
    assert entry.state is ConfigEntryState.LOADED
    assert ir.async_get(hass).async_get_issue(DOMAIN, f"store_{entry.entry_id}") is None
    assert await hass.config_entries.async_unload(entry.entry_id)
