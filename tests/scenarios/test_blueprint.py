"""The blueprints shipped in blueprints/: valid for Home Assistant, and they work end to end."""

import shutil
from pathlib import Path

import pytest
import yaml
from homeassistant.components.automation.config import AUTOMATION_BLUEPRINT_SCHEMA
from homeassistant.components.blueprint.models import Blueprint
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import load_yaml_dict
from pytest_homeassistant_custom_component.common import async_mock_service
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of

BLUEPRINTS = Path(__file__).parents[2] / "blueprints" / "automation" / "pacerelle"


@pytest.mark.parametrize("path", sorted(BLUEPRINTS.glob("*.yaml")), ids=lambda path: path.name)
def test_blueprint_is_valid(path: Path) -> None:
    blueprint = Blueprint(
        load_yaml_dict(str(path)), expected_domain="automation", schema=AUTOMATION_BLUEPRINT_SCHEMA
    )
    assert blueprint.name.startswith("Pacerelle")
    assert blueprint.inputs


async def test_answer_keyword_blueprint_answers_the_owner_not_the_relays_device(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    """Imported as the blueprint editor does (`blueprint/save`), then used by an automation
    of configuration.yaml, reloaded: the owner's phone gets the home's state; a device the
    relay announces for the owner (unverified) writes the keyword and gets nothing."""
    setup = await start_agent(hass, emulator, spoken=True)  # phone 1 wrote: trusted
    conversation = setup.installed.conversation_id
    assert await async_setup_component(hass, "automation", {"automation": []})
    client = await hass_ws_client(hass)
    await client.send_json_auto_id(
        {
            "type": "blueprint/save",
            "domain": "automation",
            "path": "pacerelle/answer_keyword",
            "yaml": (BLUEPRINTS / "answer_keyword.yaml").read_text(encoding="utf-8"),
        }
    )
    assert (await client.receive_json())["success"]
    automation = {
        "alias": "Status",
        "use_blueprint": {
            "path": "pacerelle/answer_keyword.yaml",
            "input": {
                "agent": setup.entry.entry_id,
                "answer": "Front door: {{ states('lock.front_door') }}.",
            },
        },
    }
    Path(hass.config.path("configuration.yaml")).write_text(
        yaml.safe_dump({"automation": [automation]}), encoding="utf-8"
    )
    await hass.services.async_call("automation", "reload", blocking=True)
    hass.states.async_set("lock.front_door", "unlocked")

    # The relay's device writes first; the owner's phone after it.
    relays = await emulator.send(conversation, text="status", device_id="2")
    assert (await event_of(setup, relays))["trusted"] is False
    owners = await emulator.send(conversation, text="  Status ")
    (answer,) = await emulator.wait_inbox(conversation, 1)
    assert (answer["text"], answer["device_id"]) == ("Front door: unlocked.", "1")
    assert answer["reply_to_message_id"] == owners
    # Runs are queued in order: an answer to the relay's device would have come first.
    await hass.async_block_till_done()
    assert len(await emulator.inbox(conversation)) == 1
    pending = [r.message_id for r in setup.runtime.agent.pending_requests()]
    assert relays in pending
    assert owners not in pending  # the owner's was marked processed
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


@pytest.mark.parametrize(
    ("answer", "reply"), [(True, "The garage is open."), (False, "Nothing done.")]
)
async def test_confirm_command_blueprint_asks_first(
    hass: HomeAssistant, emulator: EmulatorHandle, answer: bool, reply: str
) -> None:
    setup = await start_agent(hass, emulator, spoken=True)  # phone 1 wrote: trusted
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
    # A device the relay announces for the owner (unverified) is not asked: nothing opens.
    relays = await emulator.send(conversation, text="open garage", device_id="2")
    assert (await event_of(setup, relays))["trusted"] is False
    command = await emulator.send(conversation, text="Open garage")
    (question,) = await emulator.wait_inbox(conversation, 1)
    assert question["device_id"] == "1"
    assert question["payload"]["kind"] == "confirm"
    assert question["payload"]["spec"]["title"] == "Open the garage?"
    assert opened == []
    await emulator.send(
        conversation, widget_response={"ref": question["payload"]["id"], "value": answer}
    )
    assert (await emulator.wait_inbox(conversation, 2))[1]["text"] == reply
    assert len(opened) == (1 if answer else 0)
    # The command was marked processed; the relay's device's message still waits.
    agent = setup.runtime.agent
    await wait_until(lambda: command not in [r.message_id for r in agent.pending_requests()])
    assert relays in [r.message_id for r in agent.pending_requests()]
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
