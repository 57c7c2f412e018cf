"""The README's automation examples, as written there, run against the emulator."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    async_capture_events,
    async_mock_service,
)

from custom_components.pacerelle.client.agent_core import ConnectionState
from tests.helpers.agent import Agent, start_agent
from tests.helpers.cameras import add_camera
from tests.helpers.conversations import name_conversation
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import wait_state
from tests.helpers.group_ask import answer, trusted_family, widget_on_every_phone
from tests.helpers.groups import DEVICES, named_family
from tests.helpers.readme import automate, example
from tests.helpers.runtime import wait_until


async def answered(hass: HomeAssistant, setup: Agent) -> None:
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "0")


async def test_answer_status(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    setup = await start_agent(hass, emulator)
    hass.states.async_set("lock.front_door", "locked")
    hass.states.async_set("alarm_control_panel.home", "armed_away")
    hass.states.async_set("sensor.living_room_temperature", "21.5")
    await automate(hass, example('Answer "status"'))
    await emulator.send(setup.installed.conversation_id, text=" Status")
    (reply,) = await emulator.wait_inbox(setup.installed.conversation_id, 1)
    assert reply["text"] == "Front door: locked. Alarm: armed_away. Inside: 21.5 °C."
    await answered(hass, setup)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


@pytest.mark.parametrize(("answer", "unlocked"), [(True, True), (False, False), (None, False)])
async def test_ask_before_unlocking(
    hass: HomeAssistant, emulator: EmulatorHandle, answer: bool | None, unlocked: bool
) -> None:
    setup = await start_agent(hass, emulator)
    conversation = setup.installed.conversation_id
    unlock_calls = async_mock_service(hass, "lock", "unlock")
    config = example("Ask before unlocking the door")
    if answer is None:
        config["actions"][0]["data"]["timeout"] = 1  # nobody answers: not a minute in a test
    await automate(hass, config)
    await emulator.send(conversation, text="Unlock")
    (question,) = await emulator.wait_inbox(conversation, 1)
    assert question["kind"] == "widget.standard"
    assert question["payload"]["spec"]["title"] == "Unlock the front door?"
    if answer is not None:
        widget_response = {"ref": question["payload"]["id"], "value": answer}
        await emulator.send(conversation, widget_response=widget_response)
    reply = (await emulator.wait_inbox(conversation, 2))[1]
    if unlocked:
        assert reply["text"] == "The front door is unlocked."
        assert [call.data["entity_id"] for call in unlock_calls] == [["lock.front_door"]]
    else:
        stays = "the front door stays locked."
        assert reply["text"] == ("No answer in time: " + stays if answer is None else stays)
        assert unlock_calls == []
    await answered(hass, setup)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_doorbell_snapshot(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    await add_camera(hass, "Front door")
    setup = await start_agent(hass, emulator)
    conversation = setup.installed.conversation_id
    await emulator.send(conversation, text="hi")  # the person speaks first
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "1")
    hass.states.async_set("binary_sensor.doorbell", "off")
    await automate(hass, example("Send a camera snapshot when the doorbell rings"))
    hass.states.async_set("binary_sensor.doorbell", "on")
    (message,) = await emulator.wait_inbox(conversation, 1)
    assert message["kind"] == "chat.message"
    assert message["payload"]["text"].startswith("Someone rang at ")
    [file] = message["files"]
    assert file["mime"] == "image/png"
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_progress_widget_example(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    setup = await start_agent(hass, emulator)
    conversation = setup.installed.conversation_id
    await emulator.send(conversation, text="hi")  # the person speaks first
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "1")
    steps = example("`pacerelle.send_widget` and `pacerelle.update_widget`")
    assert isinstance(steps, list)
    assert await async_setup_component(
        hass, "script", {"script": {"progress": {"sequence": steps}}}
    )
    await hass.services.async_call("script", "progress", blocking=True)
    sent, updated = await emulator.wait_inbox(conversation, 2)
    assert (sent["kind"], sent["payload"]["spec"]["value"]) == ("widget.standard", 0)
    assert updated["kind"] == "widget.update"
    assert updated["payload"]["ref"] == "backup-progress"
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


def _running(hass: HomeAssistant, entity_id: str) -> int:
    state = hass.states.get(entity_id)
    assert state is not None
    return int(state.attributes.get("current", 0))


async def test_leak_alert_twice_with_the_connection_cut_between(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """Sent at once: the run ends there. Cut: each leak (two while cut) is queued, its run
    waits, and ends when it is sent, without a notification. Expired: the notification."""
    setup = await start_agent(hass, emulator)
    conversation = setup.installed.conversation_id
    await emulator.send(conversation, text="hi")  # the person speaks first
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "1")
    assert await async_setup_component(hass, "persistent_notification", {})
    leak, automation = "binary_sensor.kitchen_leak", "automation.water_leak_alert"
    hass.states.async_set(leak, "off")
    config = example("Alert me even if the connection is down")
    # The same, expiring after a second instead of two hours, on a leak of its own.
    short = example("Alert me even if the connection is down")
    short["alias"] = "Water leak alert, short"
    short["triggers"][0]["entity_id"] = "binary_sensor.short_leak"
    short["actions"][0]["data"]["expire_after"] = {"seconds": 1}
    short["actions"][2]["timeout"] = {"seconds": 20}
    hass.states.async_set("binary_sensor.short_leak", "off")
    assert await async_setup_component(hass, "automation", {"automation": [config, short]})
    await hass.async_block_till_done()

    hass.states.async_set(leak, "on")
    (first,) = await emulator.wait_inbox(conversation, 1)
    assert first["text"] == "Water leak in the kitchen!"
    await wait_until(lambda: _running(hass, automation) == 0)

    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: setup.runtime.status.state is not ConnectionState.CONNECTED)
    for _ in range(2):  # a second leak while the first waits: not "Already running"
        hass.states.async_set(leak, "off")
        hass.states.async_set(leak, "on")
    await wait_until(lambda: setup.runtime.status.queued_sends == 2)
    await wait_until(lambda: _running(hass, automation) == 2)
    await emulator.faults(reset=True)
    sent = await emulator.wait_inbox(conversation, 3, within=30)
    assert [m["text"] for m in sent[1:]] == ["Water leak in the kitchen!"] * 2
    await wait_until(lambda: _running(hass, automation) == 0)

    # Expired unsent (two hours in the README; a second here): the notification says so.
    notified = async_capture_events(hass, "call_service")
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: setup.runtime.status.state is not ConnectionState.CONNECTED)
    hass.states.async_set("binary_sensor.short_leak", "on")
    await wait_until(lambda: any(e.data["service"] == "create" for e in notified), within=15)
    [created] = [e.data for e in notified if e.data["service"] == "create"]
    assert created["domain"] == "persistent_notification"
    assert created["service_data"]["title"] == "Water leak"
    await wait_until(lambda: _running(hass, "automation.water_leak_alert_short") == 0)
    await emulator.faults(reset=True)
    # Never sent late.
    await wait_until(lambda: setup.runtime.status.state is ConnectionState.CONNECTED)
    assert len(await emulator.inbox(conversation)) == 3
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_tell_the_family_group(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    """The named group's notify entity, from an automation: every member's phones."""
    setup = await start_agent(hass, emulator)
    group_id, members = await named_family(hass, emulator, setup)
    hass.states.async_set("binary_sensor.kitchen_leak", "off")
    await automate(hass, example("Tell the family group"))
    hass.states.async_set("binary_sensor.kitchen_leak", "on")
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert sorted((e["user_id"], e["device_id"]) for e in entries) == sorted(
        (member, device_id) for member in members for device_id in DEVICES
    )
    assert all(e["text"].startswith("Water leak\nThe kitchen is leaking (") for e in entries)
    # Nothing of it went to the owner's direct conversation (its "hello" was answered by none).
    assert await emulator.inbox(setup.conversation_id) == []
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_family_dinner_poll_at_five(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    """Asked by the named group's entity, not in reply: each member answers, the count goes
    to the group by the same entity."""
    setup, group_id, members = await trusted_family(hass, emulator)
    await name_conversation(hass, setup, group_id, "Family")
    await automate(hass, example("Family dinner poll at five"))
    # Run now, as at five (the time trigger itself is Home Assistant's).
    await hass.services.async_call(
        "automation",
        "trigger",
        {"entity_id": "automation.pacerelle_family_group_dinner_poll_at_five"},
    )
    widget_id = await widget_on_every_phone(emulator, group_id, members, "individual")
    for member, value in ((members[0], True), ("usr_ana", False), ("usr_ben", True)):
        await answer(emulator, group_id, widget_id, member, value)
    entries = await emulator.wait_inbox(group_id, 2 * len(members) * len(DEVICES))
    assert {e["text"] for e in entries if e["kind"] == "text"} == {"Dinner at home: 2 of 3."}
    # Its time trigger lets go (its timer would outlive the test).
    await hass.services.async_call("automation", "turn_off", {"entity_id": "all"}, blocking=True)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
