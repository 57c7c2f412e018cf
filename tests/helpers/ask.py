"""`pacerelle.ask` run from a real script, and the question as the person's device shows it."""

import asyncio
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

from tests.helpers.agent import Agent
from tests.helpers.emulator import EmulatorHandle


async def ask_script(hass: HomeAssistant, ask: dict[str, Any]) -> None:
    """script.ask_person: asks, keeps the answer in a response variable and returns it."""
    assert await async_setup_component(
        hass,
        "script",
        {
            "script": {
                "ask_person": {
                    "sequence": [
                        {"action": "pacerelle.ask", "data": ask, "response_variable": "answer"},
                        {
                            "variables": {
                                "result": "{{ {'status': answer.status, 'value': answer.value,"
                                " 'widget_id': answer.widget_id} }}"
                            }
                        },
                        {"stop": "asked", "response_variable": "answer"},
                    ]
                }
            }
        },
    )


def run_script(hass: HomeAssistant) -> asyncio.Task[Any]:
    return hass.async_create_task(
        hass.services.async_call("script", "ask_person", blocking=True, return_response=True)
    )


async def widget_on_device(emulator: EmulatorHandle, agent: Agent, count: int) -> dict[str, Any]:
    """The question as the person's device received it."""
    inbox = await emulator.wait_inbox(agent.conversation_id, count)
    item = inbox[count - 1]
    assert item["kind"] == "widget.standard"
    payload: dict[str, Any] = item["payload"]
    return payload
