"""pacerelle.ask in a real script: answered by the person's device, cancelled, or timed out."""

import asyncio

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_WIDGET_RESPONSE
from tests.helpers.agent import start_agent
from tests.helpers.ask import ask_script, run_script, widget_on_device
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, refused


async def test_answer_returns_to_the_script(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    await ask_script(
        hass, {"kind": "confirm", "title": "Unlock the front door?", "danger": True, "timeout": 30}
    )
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 1)
    assert question["kind"] == "confirm"
    assert question["spec"] == {"title": "Unlock the front door?", "danger": True}
    assert question["expires_at"].endswith("+00:00")
    answer_id = await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": True}
    )
    result = await asyncio.wait_for(script, 10)
    assert result["status"] == "answered"
    assert result["value"] is True
    assert result["widget_id"] == question["id"]
    assert result["answer_message_id"] == answer_id
    assert result["sender_id"] == agent.installed.owner_id
    # The event fired too, and the answer is handled (nothing left pending but the greeting).
    assert [event.data["widget_id"] for event in answers] == [question["id"]]
    assert answers[0].data["value"] is True
    pending = [request.message_id for request in agent.runtime.agent.pending_requests()]
    assert answer_id not in pending


async def test_choice_answer_and_options_as_text(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    task = hass.async_create_task(
        call(hass, "ask", {"kind": "choice", "title": "Mode?", "options": ["Away", "Home"]})
    )
    question = await widget_on_device(emulator, agent, 1)
    assert question["spec"]["options"] == [
        {"id": "Away", "label": "Away"},
        {"id": "Home", "label": "Home"},
    ]
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": "Away"}
    )
    result = await asyncio.wait_for(task, 10)
    assert (result["status"], result["value"]) == ("answered", "Away")


async def test_cancel_is_its_own_answer(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await ask_script(hass, {"kind": "datetime", "title": "When?", "mode": "date", "timeout": 30})
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 1)
    assert question["spec"]["mode"] == "date"
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "cancelled": True}
    )
    result = await asyncio.wait_for(script, 10)
    assert result["status"] == "cancelled"
    assert result["value"] is None


async def test_nobody_answers(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await ask_script(
        hass,
        {
            "kind": "form",
            "title": "Guest name?",
            "fields": [{"name": "guest", "label": "Name", "type": "text"}],
            "timeout": 1,
        },
    )
    result = await asyncio.wait_for(run_script(hass), 10)
    assert result["status"] == "timeout"
    assert result["value"] is None
    assert result["answer_message_id"] is None
    # A late answer still fires its event, for automations that want it.
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    question = await widget_on_device(emulator, agent, 1)
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": {"guest": "Ann"}}
    )
    await wait_until(lambda: len(answers) == 1)
    assert answers[0].data["value"] == {"guest": "Ann"}


async def test_a_forms_number_comes_back_as_a_number(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    fields = [
        {"name": "guest", "label": "Name", "type": "text"},
        {"name": "guests", "label": "How many?", "type": "number"},
        {"name": "litres", "label": "Litres", "type": "number"},
    ]
    task = hass.async_create_task(
        call(hass, "ask", {"kind": "form", "title": "Who?", "fields": fields})
    )
    question = await widget_on_device(emulator, agent, 1)
    # The apps send a number field as text: one that reads as no number is no answer.
    refused_value = {"guest": "Ann", "guests": "lots", "litres": "1"}
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": refused_value}
    )
    await wait_until(lambda: "field guests is not a number" in caplog.text)
    assert not task.done()
    value = {"guest": "12", "guests": "3", "litres": "2.5"}
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": value}
    )
    result = await asyncio.wait_for(task, 10)
    assert result["status"] == "answered"
    assert result["value"] == {"guest": "12", "guests": 3, "litres": 2.5}
    assert type(result["value"]["guests"]) is int
    await wait_until(lambda: len(answers) == 2)
    assert answers[1].data["value"] == {"guest": "12", "guests": 3, "litres": 2.5}


async def test_other_answers_do_not_end_the_wait(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    task = hass.async_create_task(call(hass, "ask", {"kind": "permission", "title": "Camera?"}))
    question = await widget_on_device(emulator, agent, 1)
    await emulator.send(agent.conversation_id, widget_response={"ref": "another", "value": True})
    await emulator.send(agent.conversation_id, text="hm")
    # An answer that does not fit a permission (not true/false) is no answer.
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": "ok"}
    )
    await wait_until(lambda: "Ignored an answer" in caplog.text)
    await asyncio.sleep(0.2)
    assert not task.done()
    await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": False}
    )
    result = await asyncio.wait_for(task, 10)
    assert (result["status"], result["value"]) == ("answered", False)


async def test_ask_misuse(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    await refused(
        hass, "ask", {"kind": "confirm", "title": "Hello?"}, "not_spoken_yet", response=True
    )
    await emulator.send(agent.conversation_id, text="hi")
    await wait_until(lambda: len(agent.events) == 1)
    error = await refused(
        hass, "ask", {"kind": "choice", "title": "Mode?"}, "invalid_widget", response=True
    )
    assert error.translation_placeholders["path"] == "spec.options"
    error = await refused(
        hass,
        "ask",
        {"kind": "confirm", "title": "t", "options": ["a"]},
        "invalid_widget",
        response=True,
    )
    assert error.translation_placeholders["path"] == "spec.options"
    error = await refused(
        hass,
        "ask",
        {"kind": "datetime", "title": "t", "mode": "time", "min": "noon"},
        "invalid_widget",
        response=True,
    )
    assert error.translation_placeholders["path"] == "spec.min"
    assert await emulator.inbox(agent.conversation_id) == []
