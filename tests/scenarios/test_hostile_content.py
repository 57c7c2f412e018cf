"""A sender's content is parsed defensively: deep JSON nesting is text, not a fault."""

import logging

import pytest
from homeassistant.core import HomeAssistant

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import human_writes

# Deep enough for Python's parser to raise RecursionError, small enough for one frame.
NESTING = 100_000


async def test_deeply_nested_json_text_is_handed_over_as_text(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    agent = await start_agent(hass, emulator)
    nested = '{"a":' + "[" * NESTING + "]" * NESTING + "}"
    with caplog.at_level(logging.WARNING):
        event = await human_writes(emulator, agent, text=nested)
        after = await human_writes(emulator, agent, text="after")
    assert (event["kind"], event["text"]) == ("text", nested)
    assert after["text"] == "after"
    faults = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert faults == [], [record.getMessage()[:200] for record in faults]
