"""The README's automation examples, as written there, run against the emulator."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from homeassistant.components.camera import Camera
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockModule,
    MockPlatform,
    async_mock_service,
    mock_integration,
    mock_platform,
)

from tests.emulator_fixtures import EmulatorHandle
from tests.entity_harness import Setup, setup_agent, wait_state

README = Path(__file__).parent.parent / "README.md"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(48))


def example(title: str) -> Any:
    """The YAML block under the README heading `### {title}`."""
    text = README.read_text()
    section = text.split(f"### {title}\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, title
    return yaml.safe_load(block.group(1))


async def automate(hass: HomeAssistant, config: dict[str, Any]) -> None:
    assert await async_setup_component(hass, "automation", {"automation": [config]})
    await hass.async_block_till_done()


async def answered(hass: HomeAssistant, setup: Setup) -> None:
    await wait_state(hass, setup.entity_id(hass, "sensor", "pending_requests"), "0")


async def test_answer_status(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    setup = await setup_agent(hass, emulator)
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
    setup = await setup_agent(hass, emulator)
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


class _FrontDoor(Camera):
    _attr_name = "Front door"

    def __init__(self) -> None:
        super().__init__()
        self.content_type = "image/png"

    async def async_camera_image(
        self, width: int | None = None, height: int | None = None
    ) -> bytes | None:
        return PNG


async def test_doorbell_snapshot(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    async def setup_platform(hass: HomeAssistant, config: Any, add: Any, info: Any = None) -> None:
        add([_FrontDoor()])

    mock_integration(hass, MockModule("test"))
    mock_platform(hass, "test.camera", MockPlatform(async_setup_platform=setup_platform))
    assert await async_setup_component(hass, "camera", {"camera": {"platform": "test"}})
    setup = await setup_agent(hass, emulator)
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
    setup = await setup_agent(hass, emulator)
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
