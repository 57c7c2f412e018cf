"""The Assist bridge and keyword automations in one conversation (assist/sharing.py): the
README's "status" automation answers "status" alone, Assist answers what nothing else did."""

import logging

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.assist import sharing
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import start_agent
from tests.helpers.assist import KITCHEN
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.readme import example
from tests.helpers.runtime import wait_until


@pytest.mark.usefixtures("kitchen_light")
async def test_a_keyword_automation_answers_alone_and_assist_answers_the_rest(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="custom_components.pacerelle.assist.bridge")
    started = await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    conversation = installed.conversation_id
    for entity_id, state in (
        ("lock.front_door", "locked"),
        ("alarm_control_panel.home", "disarmed"),
        ("sensor.living_room_temperature", "21.5"),
    ):
        hass.states.async_set(entity_id, state)
    assert await async_setup_component(
        hass, "automation", {"automation": [example('Answer "status"')]}
    )
    await hass.async_block_till_done()

    status = await emulator.send(conversation, text="status")
    await wait_until(lambda: f"leaves {status} to the automation" in caplog.text, within=10)
    light = await emulator.send(conversation, text="turn on the kitchen light")
    first, second = await emulator.wait_inbox(conversation, 2, within=20)
    assert (first["reply_to_message_id"], first["text"]) == (
        status,
        "Front door: locked. Alarm: disarmed. Inside: 21.5 °C.",
    )
    assert (second["reply_to_message_id"], second["text"]) == (light, "Turned on the light")
    assert hass.states.get(KITCHEN).state == "on"
    await wait_until(lambda: runtime.status.pending == 0)
    # Nothing more comes: Assist did not answer "status" as well.
    assert len(await emulator.inbox(conversation)) == 2


@pytest.mark.usefixtures("kitchen_light")
async def test_a_request_an_automation_took_is_left_at_once(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bridge looks again at each send or mark the agent reports: it does not sit out
    the grace for a request already answered (a grace of a minute here shows it)."""
    monkeypatch.setattr(sharing, "AUTOMATION_GRACE", 60.0)
    caplog.set_level(logging.DEBUG, logger="custom_components.pacerelle.assist.bridge")
    installed = (
        await start_agent(hass, emulator, options={CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT})
    ).installed
    for entity_id, state in (
        ("lock.front_door", "locked"),
        ("alarm_control_panel.home", "disarmed"),
        ("sensor.living_room_temperature", "21.5"),
    ):
        hass.states.async_set(entity_id, state)
    assert await async_setup_component(
        hass, "automation", {"automation": [example('Answer "status"')]}
    )
    await hass.async_block_till_done()
    status = await emulator.send(installed.conversation_id, text="status")
    await wait_until(lambda: f"leaves {status} to the automation" in caplog.text, within=10)
    [answer] = await emulator.wait_inbox(installed.conversation_id, 1)
    assert answer["reply_to_message_id"] == status
