"""The Assist bridge refuses commands that waited at the relay (issue 12, item 3)."""

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.assist.bridge import request_age
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.limits import MAX_REQUEST_AGE
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.emulator.clock import Clock
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

TOO_OLD = "too late to run it as a command"


@pytest.mark.usefixtures("kitchen_light")
async def test_a_command_queued_while_home_assistant_was_off_is_not_run(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    # The relay's clock starts six minutes back, so that moving it forward below is the
    # time Home Assistant spent off while the command waited at the relay.
    waited = MAX_REQUEST_AGE + 60
    emulator.emulator.clock = Clock(-waited)
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    installed, entry = started.installed, started.entry
    conversation = installed.conversation_id
    assert await hass.config_entries.async_unload(entry.entry_id)

    # Written while Home Assistant is off: the relay keeps it (and stamps its time).
    queued = await emulator.send(conversation, text="turn on the kitchen light")
    await emulator.advance_clock(waited)

    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    [reply] = await emulator.wait_inbox(conversation, 1, within=20)
    assert reply["reply_to_message_id"] == queued
    assert TOO_OLD in reply["text"]
    assert hass.states.get(KITCHEN).state == "off"
    # Still pending: an automation or a tool may still decide what to do with it.
    assert [r.message_id for r in runtime.agent.pending_requests()] == [queued]

    # A fresh command is run as before.
    await emulator.send(conversation, text="turn on the kitchen light")
    second = (await emulator.wait_inbox(conversation, 2, within=20))[1]
    assert second["text"] == "Turned on the light"
    assert hass.states.get(KITCHEN).state == "on"


def test_the_age_counts_from_the_older_time_and_ignores_a_future_one() -> None:
    now = 1_800_000_000.0

    received = now - 10
    assert request_age(received, None, now) == 10
    assert request_age(received, now - 900, now) == 900
    # A relay claiming a time after ours cannot make a request look younger than it is.
    assert request_age(received, now + 900, now) == 10
