"""The demo's voice path in the test harness: the configuration scripts/develop writes,
with its real speech-to-text (PocketSphinx), light, Assist and shopping list.

Only scripts/develop links `pacerelle_demo` into a configuration: here it is a mocked
integration whose `stt` platform is the demo's own module, loaded from its file.
"""

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Final

from homeassistant import config as conf_util
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    mock_integration,
    mock_platform,
)

from tests.test_develop_config import develop_config

ROOT: Final = Path(__file__).resolve().parents[1]
DEMO: Final = ROOT / "scripts" / "lib" / "demo" / "pacerelle_demo"
SPOKEN: Final = ROOT / "tests" / "data" / "voice"  # made by make_spoken_commands.py
KITCHEN_LIGHT: Final = "light.kitchen_light"
ENGINE: Final = "pacerelle_demo"


def load_demo_module(name: str) -> ModuleType:
    """The demo integration's module `name` (its __init__ or a platform), from its file."""
    spec = importlib.util.spec_from_file_location(f"pacerelle_demo_{name}", DEMO / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def async_demo_voice(hass: HomeAssistant) -> None:
    """The demo's configuration written and its voice path set up, Home Assistant started
    (the demo gives the preferred voice assistant its speech-to-text then)."""
    config_dir = Path(hass.config.config_dir)
    await hass.async_add_executor_job(develop_config.write_new_configuration, config_dir)
    demo = await hass.async_add_executor_job(load_demo_module, "__init__")
    mock_integration(
        hass,
        MockModule(ENGINE, async_setup=demo.async_setup, config_schema=demo.CONFIG_SCHEMA),
    )
    stt = await hass.async_add_executor_job(load_demo_module, "stt")
    mock_platform(hass, f"{ENGINE}.stt", stt)
    config = await conf_util.async_hass_config_yaml(hass)
    for domain in ("homeassistant", "input_boolean", "template", ENGINE, "todo"):
        assert await async_setup_component(hass, domain, config), domain
    # Onboarding adds the shopping list (todo.shopping_list) to a new install.
    shopping = MockConfigEntry(domain="shopping_list")
    shopping.add_to_hass(hass)
    assert await hass.config_entries.async_setup(shopping.entry_id)
    for domain in ("conversation", "assist_pipeline"):
        assert await async_setup_component(hass, domain, config), domain
    await hass.async_block_till_done()
    await hass.async_start()
    await hass.async_block_till_done()


def spoken(name: str) -> bytes:
    """A committed spoken command (16 kHz mono 16-bit WAV)."""
    return (SPOKEN / name).read_bytes()
