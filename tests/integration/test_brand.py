"""Home Assistant shows the integration's own icon (custom_components/pacerelle/brand/)."""

from http import HTTPStatus
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

import custom_components.pacerelle

BRAND = Path(custom_components.pacerelle.__file__).parent / "brand"


async def test_brand_icons_are_served(
    hass: HomeAssistant, hass_client: ClientSessionGenerator
) -> None:
    assert await async_setup_component(hass, "brands", {})
    client = await hass_client()
    for image in ("icon.png", "icon@2x.png", "logo.png", "dark_icon.png"):
        response = await client.get(f"/api/brands/integration/pacerelle/{image}")
        assert response.status == HTTPStatus.OK, image
        served = await response.read()
        expected = "icon@2x.png" if image == "icon@2x.png" else "icon.png"
        assert served == (BRAND / expected).read_bytes()
