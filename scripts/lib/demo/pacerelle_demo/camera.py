"""`camera.front_door`: the bundled picture of a front door, for README's snapshot example.

Only scripts/develop links this integration into its configuration; it never ships.
"""

from pathlib import Path
from typing import Any

from homeassistant.components.camera import Camera
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddEntitiesCallback
from homeassistant.helpers.typing import ConfigType, DiscoveryInfoType

IMAGE = Path(__file__).with_name("front_door.jpg")


async def async_setup_platform(
    hass: HomeAssistant,
    config: ConfigType,
    async_add_entities: AddEntitiesCallback,
    discovery_info: DiscoveryInfoType | None = None,
) -> None:
    image = await hass.async_add_executor_job(IMAGE.read_bytes)
    async_add_entities([FrontDoorCamera(image)])


class FrontDoorCamera(Camera):
    """Always the same picture: what a camera at the front door would have seen."""

    _attr_name = "Front door"
    _attr_unique_id = "pacerelle_demo_front_door"

    def __init__(self, image: bytes) -> None:
        super().__init__()
        self._image = image
        self.content_type = "image/jpeg"

    async def async_camera_image(
        self, width: int | None = None, height: int | None = None, **_kwargs: Any
    ) -> bytes:
        return self._image
