"""The demo's camera, speech-to-text and text-to-speech (scripts/develop), so snapshots and
voice notes work offline: `camera.front_door` shows a bundled picture (camera.py);
`pacerelle_demo:` in the demo's package loads the speech-to-text engine `pacerelle_demo`
(stt.py) and the text-to-speech engine `pacerelle_demo` (tts.py). Home Assistant's `stt:`
and `tts:` take no YAML here, so the engines are loaded as discovered platforms.

Once Home Assistant has started, each engine that loaded is lent to the preferred Assist
pipeline if that has none of its kind (`async_lend_when_started`), so that the demo's
"Preferred voice assistant" hears and speaks. A pipeline's own engine is left alone.
"""

import asyncio
import logging
from typing import Final, Literal

from homeassistant.components.assist_pipeline import DOMAIN as ASSIST_PIPELINE
from homeassistant.components.assist_pipeline import async_update_pipeline
from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline
from homeassistant.const import EVENT_COMPONENT_LOADED, Platform
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.discovery import async_load_platform
from homeassistant.helpers.start import async_at_started
from homeassistant.helpers.typing import ConfigType
from homeassistant.setup import EventComponentLoaded
from homeassistant.util.hass_dict import HassKey

_LOGGER = logging.getLogger(__name__)

DOMAIN: Final = "pacerelle_demo"
# Both engines' id (a legacy platform's engine is its integration's domain) and language.
ENGINE: Final = DOMAIN
LANGUAGE: Final = "en-US"
CONFIG_SCHEMA = cv.empty_config_schema(DOMAIN)
# Engines lend one at a time: each reads the pipeline as the other left it.
LENDING: HassKey[asyncio.Lock] = HassKey(f"{DOMAIN}_lending")

type Kind = Literal["stt", "tts"]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    for platform in (Platform.STT, Platform.TTS):
        hass.async_create_task(async_load_platform(hass, platform, DOMAIN, {}, config))
    return True


@callback
def async_lend_when_started(hass: HomeAssistant, kind: Kind) -> None:
    """Once Home Assistant has started and Assist is loaded, lend the engine of `kind`."""

    async def started(hass: HomeAssistant) -> None:
        if ASSIST_PIPELINE in hass.config.components:
            await _lend(hass, kind)
            return

        @callback
        def loaded(event: Event[EventComponentLoaded]) -> None:
            if event.data["component"] == ASSIST_PIPELINE:
                stop()
                hass.async_create_task(_lend(hass, kind))

        stop = hass.bus.async_listen(EVENT_COMPONENT_LOADED, loaded)

    async_at_started(hass, started)


async def _lend(hass: HomeAssistant, kind: Kind) -> None:
    async with hass.data.setdefault(LENDING, asyncio.Lock()):
        pipeline = async_get_pipeline(hass)
        if kind == "stt" and pipeline.stt_engine is None:
            await async_update_pipeline(hass, pipeline, stt_engine=ENGINE, stt_language=LANGUAGE)
            _LOGGER.info(
                "The voice assistant %s now hears with the demo's speech-to-text", pipeline.name
            )
        elif kind == "tts" and pipeline.tts_engine is None:
            await async_update_pipeline(
                hass, pipeline, tts_engine=ENGINE, tts_language=LANGUAGE, tts_voice=None
            )
            _LOGGER.info(
                "The voice assistant %s now speaks with the demo's text-to-speech", pipeline.name
            )
