"""The blueprints shipped in blueprints/: valid for Home Assistant, and they work end to end."""

import shutil
from pathlib import Path

import pytest
from homeassistant.components.automation.config import AUTOMATION_BLUEPRINT_SCHEMA
from homeassistant.components.blueprint.models import Blueprint
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import load_yaml_dict
from pytest_homeassistant_custom_component.common import async_mock_service

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import wait_state

BLUEPRINTS = Path(__file__).parents[2] / "blueprints" / "automation" / "pacerelle"


@pytest.mark.parametrize("path", sorted(BLUEPRINTS.glob("*.yaml")), ids=lambda path: path.name)
def test_blueprint_is_valid(path: Path) -> None:
    blueprint = Blueprint(
        load_yaml_dict(str(path)), expected_domain="automation", schema=AUTOMATION_BLUEPRINT_SCHEMA
    )
    assert blueprint.name.startswith("Pacerelle")
    assert blueprint.inputs


async def test_answer_keyword_blueprint_answers_and_marks_processed(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    setup = await start_agent(hass, emulator)
    installed = setup.installed
    target = Path(hass.config.path("blueprints", "automation", "pacerelle"))
    target.mkdir(parents=True)
    shutil.copy(BLUEPRINTS / "answer_keyword.yaml", target)
    hass.states.async_set("sensor.living_room_temperature", "21.5")
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "alias": "Status",
                "use_blueprint": {
                    "path": "pacerelle/answer_keyword.yaml",
                    "input": {
                        "agent": setup.entry.entry_id,
                        "answer": "Living room: {{ states('sensor.living_room_temperature') }} °C",
                    },
                },
            }
        },
    )
    pending = setup.entity_id(hass, "sensor", "pending_requests")
    await emulator.send(installed.conversation_id, text="Hello")  # not the keyword
    await wait_state(hass, pending, "1")
    await emulator.send(installed.conversation_id, text="  Status ", device_id="2")
    (answer,) = await emulator.wait_inbox(installed.conversation_id, 1)
    assert answer["text"] == "Living room: 21.5 °C"
    assert answer["device_id"] == "2"
    await wait_state(hass, pending, "1")  # the keyword was processed, "Hello" still waits
    assert [r.text for r in setup.runtime.agent.pending_requests()] == ["Hello"]
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


@pytest.mark.parametrize(
    ("answer", "reply"), [(True, "The garage is open."), (False, "Nothing done.")]
)
async def test_confirm_command_blueprint_asks_first(
    hass: HomeAssistant, emulator: EmulatorHandle, answer: bool, reply: str
) -> None:
    setup = await start_agent(hass, emulator)
    conversation = setup.installed.conversation_id
    target = Path(hass.config.path("blueprints", "automation", "pacerelle"))
    target.mkdir(parents=True)
    shutil.copy(BLUEPRINTS / "confirm_command.yaml", target)
    opened = async_mock_service(hass, "cover", "open_cover")
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "alias": "Garage",
                "use_blueprint": {
                    "path": "pacerelle/confirm_command.yaml",
                    "input": {
                        "agent": setup.entry.entry_id,
                        "command": "open garage",
                        "question": "Open the garage?",
                        "actions": [
                            {"action": "cover.open_cover", "target": {"entity_id": "cover.garage"}}
                        ],
                        "done_text": "The garage is open.",
                    },
                },
            }
        },
    )
    await emulator.send(conversation, text="Open garage")
    (question,) = await emulator.wait_inbox(conversation, 1)
    assert question["payload"]["kind"] == "confirm"
    assert question["payload"]["spec"]["title"] == "Open the garage?"
    assert opened == []
    await emulator.send(
        conversation, widget_response={"ref": question["payload"]["id"], "value": answer}
    )
    assert (await emulator.wait_inbox(conversation, 2))[1]["text"] == reply
    assert len(opened) == (1 if answer else 0)
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "0")
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
