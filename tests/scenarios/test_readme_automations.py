"""Every YAML automation of README.md, saved through the automation editor's API in a Home
Assistant with the demo's configuration (scripts/lib/develop_config.py and its package):
it loads, names only entities the demo has (and `notify.family`, the family group
named as README's "Named conversations" says), and neither loading nor opening it in the
editor (the frontend validates and listens to each trigger, those of a wait included)
logs an error or a template warning (issue 29)."""

import importlib.util
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from homeassistant import config as conf_util
from homeassistant.components.automation import entities_in_automation
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    mock_integration,
    mock_platform,
)

from tests.helpers.agent import start_agent
from tests.helpers.demo_speech import DEMO_PORT
from tests.helpers.develop import ROOT, develop_config
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import named_family
from tests.helpers.runtime import wait_until

README = ROOT / "README.md"
DEMO_CAMERA = ROOT / "scripts" / "lib" / "demo" / "pacerelle_demo" / "camera.py"
# Template warnings (an undefined variable) are told at warning level by this logger.
TEMPLATE_LOGGER = "homeassistant.helpers.template"
# What the README's examples may name: an entity id in a template or a target.
ENTITY_ID = re.compile(
    r"\b(?:alarm_control_panel|binary_sensor|camera|input_boolean|input_button|light|lock"
    r"|notify|person|sensor|todo)\.[a-z0-9_]+\b"
)


def readme_automations() -> Iterator[dict[str, Any]]:
    """The README's YAML blocks that are whole automations (triggers and actions)."""
    for block in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL):
        loaded = yaml.safe_load(block)
        if isinstance(loaded, dict) and "triggers" in loaded and "actions" in loaded:
            yield loaded


AUTOMATIONS = list(readme_automations())


def _named(config: Any) -> Iterator[str]:
    """The entity ids in an automation's values (targets, templates), not its actions."""
    if isinstance(config, dict):
        for key, value in config.items():
            if key != "action":
                yield from _named(value)
    elif isinstance(config, list):
        for item in config:
            yield from _named(item)
    elif isinstance(config, str):
        yield from ENTITY_ID.findall(config)


def _triggers(config: Any) -> Iterator[dict[str, Any]]:
    """Every trigger of an automation, a `wait_for_trigger`'s anywhere in it included."""
    if isinstance(config, dict):
        for key, value in config.items():
            if key in ("triggers", "wait_for_trigger") and isinstance(value, list):
                yield from value
            else:
                yield from _triggers(value)
    elif isinstance(config, list):
        for item in config:
            yield from _triggers(item)


async def _demo(hass: HomeAssistant) -> None:
    """The demo configuration as scripts/develop writes it, its package's devices set up."""
    config_dir = Path(hass.config.config_dir)
    assert await hass.async_add_executor_job(
        develop_config.write_new_configuration, config_dir, DEMO_PORT
    )
    config = await conf_util.async_hass_config_yaml(hass)
    # The demo's camera integration (only scripts/develop links it into a configuration).
    mock_integration(hass, MockModule("pacerelle_demo"))
    camera_module = await hass.async_add_executor_job(_load_demo_camera)
    mock_platform(hass, "pacerelle_demo.camera", camera_module)
    for domain in (
        "homeassistant",
        "input_button",
        "input_boolean",
        "template",
        "alarm_control_panel",
        "camera",
        "person",
        "todo",
    ):
        assert await async_setup_component(hass, domain, config), domain
    # Onboarding adds the shopping list (todo.shopping_list) to a new install.
    shopping = MockConfigEntry(domain="shopping_list")
    shopping.add_to_hass(hass)
    assert await hass.config_entries.async_setup(shopping.entry_id)
    assert await async_setup_component(hass, "websocket_api", {})
    assert await async_setup_component(hass, "config", {})
    assert await async_setup_component(hass, "automation", config)
    await hass.async_block_till_done()


def _load_demo_camera() -> Any:
    spec = importlib.util.spec_from_file_location("pacerelle_demo_camera", DEMO_CAMERA)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_has_its_automations() -> None:
    aliases = [config.get("alias") for config in AUTOMATIONS]
    assert len(aliases) >= 7, aliases
    assert all(aliases), "every example has an alias (the editor lists it by it)"
    assert all("mode" in config for config in AUTOMATIONS), "every example says its mode"


async def test_every_readme_automation_saves_loads_and_opens_cleanly(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    hass_client: Any,
    hass_ws_client: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _demo(hass)
    agent = await start_agent(hass, emulator)  # an agent named "Home": notify.home
    await named_family(hass, emulator, agent)  # its group named "Family": notify.family
    client = await hass_client()
    ws = await hass_ws_client(hass)
    caplog.clear()
    caplog.set_level(logging.WARNING)
    for number, config in enumerate(AUTOMATIONS):
        alias = config["alias"]
        automation_id = f"readme_{number}"
        response = await client.post(f"/api/config/automation/config/{automation_id}", json=config)
        assert response.status == 200, (alias, await response.text())
        entity_id = f"automation.{slugify(alias)}"
        await wait_until(lambda entity_id=entity_id: hass.states.get(entity_id) is not None)
        await hass.async_block_till_done()
        state = hass.states.get(entity_id)
        assert state is not None
        assert state.state == "on", (alias, state)
        assert state.attributes["id"] == automation_id

        # Only entities the demo has: those Home Assistant found, and those in templates.
        named = set(entities_in_automation(hass, entity_id))
        named |= set(_named(config))
        missing = sorted(e for e in named if hass.states.get(e) is None)
        assert not missing, (alias, missing)

        # Opened in the editor: read back, validated, each trigger listened to.
        response = await client.get(f"/api/config/automation/config/{automation_id}")
        assert response.status == 200
        assert (await response.json())["alias"] == alias
        await ws.send_json_auto_id(
            {
                "type": "validate_config",
                "triggers": config["triggers"],
                "conditions": config.get("conditions", []),
                "actions": config["actions"],
            }
        )
        validated = (await ws.receive_json())["result"]
        assert all(part["valid"] for part in validated.values()), (alias, validated)
        for trigger in _triggers(config):
            await ws.send_json_auto_id({"type": "subscribe_trigger", "trigger": trigger})
            answer = await ws.receive_json()
            assert answer["success"], (alias, trigger, answer)
            await ws.send_json_auto_id({"type": "unsubscribe_events", "subscription": answer["id"]})
            assert (await ws.receive_json())["success"]
        await hass.async_block_till_done()
        logged = [
            f"{record.name}: {record.getMessage()}"
            for record in caplog.records
            if record.levelno >= logging.ERROR or record.name.startswith(TEMPLATE_LOGGER)
        ]
        assert not logged, (alias, logged)
    # Their triggers let go (a time trigger's timer would outlive the test).
    await hass.services.async_call("automation", "turn_off", {"entity_id": "all"}, blocking=True)
