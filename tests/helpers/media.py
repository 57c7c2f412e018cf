"""An agent that saves attachments: its media folder is tmp_path/media/pacerelle."""

from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.options import CONF_MEDIA_FOLDER
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle


async def media_agent(hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path) -> Agent:
    """Started with the media folder tmp_path/media/pacerelle (made, and allowed by HA)."""
    (tmp_path / "media" / "pacerelle").mkdir(parents=True)
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    return await start_agent(
        hass, emulator, options={CONF_MEDIA_FOLDER: str(tmp_path / "media" / "pacerelle")}
    )
