"""The agent's sensors follow its connection and its messages, against the running emulator."""

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from unittest.mock import PropertyMock, patch

import pytest
from homeassistant.const import EVENT_HOMEASSISTANT_STOP, STATE_UNAVAILABLE, Platform
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.util import dt as dt_util
from syrupy.assertion import SnapshotAssertion

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import ha_snapshot, replacing, state_of, wait_state
from tests.helpers.runtime import wait_until


@pytest.fixture
def entity_registry_enabled_by_default() -> Iterator[None]:
    """Entities disabled by default are created enabled (as Home Assistant's own tests do)."""
    with patch(
        "homeassistant.helpers.entity.Entity.entity_registry_enabled_default",
        new_callable=PropertyMock,
        return_value=True,
    ):
        yield


@pytest.mark.usefixtures("entity_registry_enabled_by_default")
async def test_sensors_follow_the_connection_and_the_messages(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    installed, runtime = setup.installed, setup.runtime
    connection = setup.entity_id(hass, "sensor", "connection_state")
    pending = setup.entity_id(hass, "sensor", "pending_requests")
    uncertain = setup.entity_id(hass, "sensor", "uncertain_sends")
    last_message = setup.entity_id(hass, "sensor", "last_message")
    code = setup.entity_id(hass, "sensor", "verification_code")
    seen: list[str] = []

    @callback
    def record(event: Event[EventStateChangedData]) -> None:
        new = event.data["new_state"]
        if new is not None and (not seen or seen[-1] != new.state):
            seen.append(new.state)

    async_track_state_change_event(hass, connection, record)

    assert state_of(hass, connection) == "connected"
    assert state_of(hass, pending) == "0"
    assert state_of(hass, uncertain) == "0"
    assert state_of(hass, last_message) == "unknown"
    assert state_of(hass, code) == runtime.status.verification_code

    # A message: one pending request, and the time it arrived.
    message_id = await emulator.send(installed.conversation_id, text="status?")
    await wait_state(hass, pending, "1")
    request = runtime.agent.find_request(message_id)
    assert request is not None
    arrived = datetime.fromtimestamp(request.received_at, UTC)
    assert dt_util.parse_datetime(state_of(hass, last_message)) == arrived.replace(microsecond=0)

    # A reply written just before the connection is cut cannot be confirmed.
    await runtime.agent.send_text("all good", source_message_id=message_id)
    await runtime.agent.mark_processed(message_id)
    await wait_state(hass, pending, "0")
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_state(hass, uncertain, "1")
    await wait_state(hass, connection, "reconnecting")
    await emulator.faults(reset=True)
    await wait_state(hass, connection, "connected")
    assert seen == ["reconnecting", "connected"]

    # Revoked in Pacerelle: disconnected for good, and no agent behind the other sensors.
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
    await wait_state(hass, connection, "disconnected")
    for entity_id in (pending, uncertain, last_message, code):
        assert state_of(hass, entity_id) == STATE_UNAVAILABLE
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
    assert state_of(hass, connection) == STATE_UNAVAILABLE


async def test_an_outage_is_logged_once_and_its_end_once(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    setup = await start_agent(hass, emulator)
    connection = setup.entity_id(hass, "sensor", "connection_state")
    caplog.set_level(logging.DEBUG, logger="custom_components.pacerelle")
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_state(hass, connection, "reconnecting")
    await wait_until(lambda: caplog.text.count("Pacerelle connection failed") >= 2, within=15)
    await emulator.faults(reset=True)
    await wait_state(hass, connection, "connected", within=40)
    infos = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("custom_components.pacerelle") and r.levelno >= logging.INFO
    ]
    assert [m for m in infos if "reachable" in m] == [
        "Pacerelle is unreachable (the connection closed); reconnecting",
        "Pacerelle is reachable again",
    ]
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_stopping_home_assistant_stops_the_agent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    connection = setup.entity_id(hass, "sensor", "connection_state")
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    await wait_state(hass, connection, "stopped")
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_one_service_device_per_agent(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    setup = await start_agent(hass, emulator)
    device = dr.async_get(hass).async_get_device_by_identifier(
        (DOMAIN, setup.entry.entry_id), setup.entry.entry_id
    )
    assert device is not None
    assert (device.name, device.manufacturer, device.model, device.sw_version) == (
        "Home",
        "Pacerelle",
        "Agent",
        None,
    )
    assert device.entry_type is dr.DeviceEntryType.SERVICE
    entities = er.async_entries_for_device(
        er.async_get(hass), device.id, include_disabled_entities=True
    )
    assert {entity.entity_id for entity in entities} == {
        "event.home_messages",
        "notify.home",
        "sensor.home_connection",
        "sensor.home_last_message",
        "sensor.home_pending_requests",
        "sensor.home_unconfirmed_sends",
        "sensor.home_queued_sends",
        "sensor.home_code",
        "sensor.home_undecryptable_messages",
    }
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_sensor_snapshot(
    hass: HomeAssistant, emulator: EmulatorHandle, snapshot: SnapshotAssertion
) -> None:
    with patch("custom_components.pacerelle.PLATFORMS", [Platform.SENSOR]):
        setup = await start_agent(hass, emulator)
    matcher = replacing(setup.volatile())
    snapshot = ha_snapshot(snapshot)
    entries = er.async_entries_for_config_entry(er.async_get(hass), setup.entry.entry_id)
    assert {entry.domain for entry in entries} == {"sensor"}
    for entry in sorted(entries, key=lambda item: item.entity_id):
        assert entry == snapshot(name=f"{entry.entity_id}-entry", matcher=matcher)
        assert hass.states.get(entry.entity_id) == snapshot(
            name=f"{entry.entity_id}-state", matcher=matcher
        )
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_unconfirmed_sends_is_disabled_by_default(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    registry = er.async_get(hass)
    uncertain = setup.entity_id(hass, "sensor", "uncertain_sends")
    entry = registry.async_get(uncertain)
    assert entry is not None
    assert entry.disabled_by is er.RegistryEntryDisabler.INTEGRATION
    assert hass.states.get(uncertain) is None
    for key in ("connection_state", "pending_requests", "last_message", "verification_code"):
        enabled = registry.async_get(setup.entity_id(hass, "sensor", key))
        assert enabled is not None
        assert enabled.disabled_by is None
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
