"""The integration is found and loads in a real Home Assistant (entries:
tests/integration/test_runtime.py)."""

from homeassistant.core import HomeAssistant
from homeassistant.loader import async_get_integration
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN


async def test_integration_is_found_and_loads(hass: HomeAssistant) -> None:
    integration = await async_get_integration(hass, DOMAIN)
    assert integration.name == "Pacerelle"
    assert integration.config_flow is True
    assert await async_setup_component(hass, DOMAIN, {})
