"""`notify.send_message` reaches the owner's conversation, against the running emulator."""

import json
from pathlib import Path
from unittest.mock import patch

import pytest
from homeassistant.components.notify import ATTR_MESSAGE, ATTR_TITLE, SERVICE_SEND_MESSAGE
from homeassistant.components.notify import DOMAIN as NOTIFY_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE, STATE_UNKNOWN, Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import entity_registry as er
from syrupy.assertion import SnapshotAssertion

import custom_components.pacerelle
from custom_components.pacerelle.client.limits import MAX_SEND_TEXT_CHARS
from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import ha_snapshot, replacing, state_of, wait_state

STRINGS = Path(custom_components.pacerelle.__file__).parent / "strings.json"


async def send(hass: HomeAssistant, entity_id: str, message: str, title: str | None = None) -> None:
    data = {ATTR_ENTITY_ID: entity_id, ATTR_MESSAGE: message}
    if title is not None:
        data[ATTR_TITLE] = title
    await hass.services.async_call(NOTIFY_DOMAIN, SERVICE_SEND_MESSAGE, data, blocking=True)


def exception_message(key: str) -> str:
    return str(json.loads(STRINGS.read_text())["exceptions"][key]["message"])


async def test_notify_reaches_the_owner_once_they_spoke_first(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    installed = setup.installed
    notify = setup.entity_id(hass, "notify", "owner")
    assert notify == "notify.home"
    assert state_of(hass, notify) == STATE_UNKNOWN

    with pytest.raises(ServiceValidationError) as refused:
        await send(hass, notify, "Hello?")
    assert refused.value.translation_key == "not_spoken_yet"
    assert "send any message to the agent" in exception_message("not_spoken_yet")
    assert state_of(hass, notify) == STATE_UNKNOWN

    await emulator.send(installed.conversation_id, text="hi", device_id="2")
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "1")
    await send(hass, notify, "The washing machine is done.", title="Laundry")
    (received,) = await emulator.wait_inbox(installed.conversation_id, 1)
    assert received["text"] == "Laundry\nThe washing machine is done."
    assert received["to"] == installed.owner_id
    assert received["device_id"] == "2"  # the device they last wrote from
    assert (received["encrypted"], received["history"]) == (True, "valid")
    assert state_of(hass, notify) != STATE_UNKNOWN  # the time of the last notification

    with pytest.raises(ServiceValidationError) as too_long:
        await send(hass, notify, "x" * (MAX_SEND_TEXT_CHARS + 1))
    assert too_long.value.translation_key == "text_too_long"
    assert str(MAX_SEND_TEXT_CHARS) in (too_long.value.translation_placeholders or {})["detail"]

    # Reconnecting: still there; a notification is queued and goes out once connected.
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_state(hass, setup.entity_id(hass, "sensor", "connection_state"), "reconnecting")
    assert state_of(hass, notify) != STATE_UNAVAILABLE
    await send(hass, notify, "anyone?")
    await emulator.faults(reset=True)
    await wait_state(hass, setup.entity_id(hass, "sensor", "connection_state"), "connected")
    queued = await emulator.wait_inbox(installed.conversation_id, 2, within=30)
    assert queued[-1]["text"] == "anyone?"

    # Revoked: the notify entity has nothing behind it any more.
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
    await wait_state(hass, notify, STATE_UNAVAILABLE)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


def test_every_notify_error_is_translated() -> None:
    exceptions = json.loads(STRINGS.read_text())["exceptions"]
    for key in ("not_spoken_yet", "not_connected", "text_too_long", "send_failed"):
        assert exceptions[key]["message"]


async def test_notify_snapshot(
    hass: HomeAssistant, emulator: EmulatorHandle, snapshot: SnapshotAssertion
) -> None:
    with patch("custom_components.pacerelle.PLATFORMS", [Platform.NOTIFY]):
        setup = await start_agent(hass, emulator)
    matcher = replacing(setup.volatile())
    snapshot = ha_snapshot(snapshot)
    (entry,) = er.async_entries_for_config_entry(er.async_get(hass), setup.entry.entry_id)
    assert entry == snapshot(name="entry", matcher=matcher)
    assert hass.states.get(entry.entity_id) == snapshot(name="state", matcher=matcher)
    assert entry.platform == DOMAIN
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
