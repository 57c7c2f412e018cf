"""Assist with a light to switch: the `kitchen_light` fixture (a plugin of tests/conftest.py)."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

KITCHEN = "light.kitchen_light"


@pytest.fixture
async def kitchen_light(hass: HomeAssistant) -> None:
    """Assist and a "Kitchen light" (a template light over an input boolean)."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"kitchen_power": {"name": "Relay 7"}}}
    )
    power = {"entity_id": "input_boolean.kitchen_power"}
    assert await async_setup_component(
        hass,
        "template",
        {
            "template": [
                {
                    "light": [
                        {
                            "name": "Kitchen light",
                            "state": "{{ is_state('input_boolean.kitchen_power', 'on') }}",
                            "turn_on": [{"action": "input_boolean.turn_on", "target": power}],
                            "turn_off": [{"action": "input_boolean.turn_off", "target": power}],
                        }
                    ]
                }
            ]
        },
    )
    await hass.async_block_till_done()
    assert hass.states.get(KITCHEN).state == "off"
