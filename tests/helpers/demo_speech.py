"""The demo's voice path in the test harness: the configuration scripts/develop writes,
with its real speech-to-text (PocketSphinx), text-to-speech (eSpeak NG), light, Assist
and shopping list.

Only scripts/develop links `pacerelle_demo` into a configuration: here it is a mocked
integration whose `stt` and `tts` platforms are the demo's own modules, loaded from its
folder.
"""

import importlib
import importlib.util
import sys
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

from tests.helpers.develop import ROOT, develop_config

DEMO: Final = ROOT / "scripts" / "lib" / "demo" / "pacerelle_demo"
SPOKEN: Final = ROOT / "tests" / "data" / "voice"  # made by make_spoken_commands.py
KITCHEN_LIGHT: Final = "light.kitchen_light"
ENGINE: Final = "pacerelle_demo"
# The port scripts/develop would give the demo's Home Assistant; no test binds it.
DEMO_PORT: Final = 18123


def load_demo_module(name: str) -> ModuleType:
    """The demo integration's module `name` (`__init__` or a platform), from its folder,
    imported as the package `pacerelle_demo` (its platforms import from it)."""
    package = sys.modules.get(ENGINE)
    if package is None:
        spec = importlib.util.spec_from_file_location(
            ENGINE, DEMO / "__init__.py", submodule_search_locations=[str(DEMO)]
        )
        assert spec is not None
        assert spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[ENGINE] = package
        spec.loader.exec_module(package)
    return package if name == "__init__" else importlib.import_module(f"{ENGINE}.{name}")


async def async_demo_voice(hass: HomeAssistant) -> None:
    """The demo's configuration written and its voice path set up, Home Assistant started
    (the demo gives the preferred voice assistant its speech-to-text then)."""
    config_dir = Path(hass.config.config_dir)
    await hass.async_add_executor_job(develop_config.write_new_configuration, config_dir, DEMO_PORT)
    demo = await hass.async_add_executor_job(load_demo_module, "__init__")
    mock_integration(
        hass,
        MockModule(ENGINE, async_setup=demo.async_setup, config_schema=demo.CONFIG_SCHEMA),
    )
    for platform in ("stt", "tts"):
        module = await hass.async_add_executor_job(load_demo_module, platform)
        mock_platform(hass, f"{ENGINE}.{platform}", module)
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
