"""The demo's camera and speech-to-text (scripts/develop), so snapshots and voice notes work
offline: `camera.front_door` shows a bundled picture (camera.py); `pacerelle_demo:` in the
demo's package loads the speech-to-text engine `pacerelle_demo` (stt.py; Home Assistant's
`stt:` takes no YAML, so the engine is loaded as a discovered platform)."""

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.discovery import async_load_platform
from homeassistant.helpers.typing import ConfigType

DOMAIN = "pacerelle_demo"
CONFIG_SCHEMA = cv.empty_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    hass.async_create_task(async_load_platform(hass, Platform.STT, DOMAIN, {}, config))
    return True
