"""The README's YAML examples, found by their heading, and an automation of them set up."""

import re
from pathlib import Path
from typing import Any

import yaml
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

README = Path(__file__).parents[2] / "README.md"


def example(title: str) -> Any:
    """The YAML block under the README heading `### {title}`."""
    text = README.read_text()
    section = text.split(f"### {title}\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, title
    return yaml.safe_load(block.group(1))


async def automate(hass: HomeAssistant, config: dict[str, Any]) -> None:
    """The automation `config` set up (and its setup done)."""
    assert await async_setup_component(hass, "automation", {"automation": [config]})
    await hass.async_block_till_done()
