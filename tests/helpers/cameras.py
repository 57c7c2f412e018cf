"""A camera entity of a test platform whose snapshot is a fixed PNG image."""

from typing import Any

from homeassistant.components.camera import Camera
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockModule,
    MockPlatform,
    mock_integration,
    mock_platform,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"snapshot" * 100


class StillCamera(Camera):
    """Named `name` (camera.<its slug>); every snapshot is PNG."""

    def __init__(self, name: str, unique_id: str | None = None) -> None:
        super().__init__()
        self._attr_name = name
        self._attr_unique_id = unique_id
        self.content_type = "image/png"

    async def async_camera_image(
        self, width: int | None = None, height: int | None = None
    ) -> bytes | None:
        return PNG


async def add_camera(hass: HomeAssistant, name: str, unique_id: str | None = None) -> None:
    """The camera platform set up with one StillCamera."""

    async def setup_platform(hass: HomeAssistant, config: Any, add: Any, info: Any = None) -> None:
        add([StillCamera(name, unique_id)])

    mock_integration(hass, MockModule("test"))
    mock_platform(hass, "test.camera", MockPlatform(async_setup_platform=setup_platform))
    assert await async_setup_component(hass, "camera", {"camera": {"platform": "test"}})
    await hass.async_block_till_done()
