"""What Home Assistant reports as deprecated in the integration's use of it: nothing.

Home Assistant logs a deprecated use by a custom integration once per call site and process
(helpers.frame), so each test starts from an empty record of what was reported.
"""

import logging

import pytest
from homeassistant.components.device_automation import (
    DeviceAutomationType,
    async_get_device_automations,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import frame

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import call


@pytest.fixture(autouse=True)
def fresh_frame_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frame, "_REPORTED_INTEGRATIONS", set())


def deprecations(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        # asyncio's slow-callback warning under load names the running test, whose name
        # says "deprecated": only Home Assistant's own reports count.
        if record.levelno >= logging.WARNING
        and record.name != "asyncio"
        and "deprecated" in record.getMessage()
    ]


async def test_a_device_picks_its_entry_without_deprecated_registry_use(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """Device triggers and services by device read the device's one config entry."""
    agent = await start_agent(hass, emulator, spoken=True)
    device_id = agent.device_id(hass)
    found = await async_get_device_automations(hass, DeviceAutomationType.TRIGGER, [device_id])
    assert found[device_id]
    await call(hass, "send_message", {"device_id": device_id, "text": "by device"})
    assert deprecations(caplog) == []
