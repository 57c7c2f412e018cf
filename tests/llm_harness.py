"""Helpers of the LLM API and Assist bridge tests: agents on the emulator, tool calls."""

from typing import Any

from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import CONF_AGENT_NAME
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.emulator_fixtures import EmulatorHandle, Installed
from tests.runtime_harness import add_entry, wait_until

LLM_CONTEXT = llm.LLMContext(
    platform="test", context=Context(), language="en", assistant="conversation", device_id=None
)


async def running_agent(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    *,
    name: str = "Home",
    options: dict[str, Any] | None = None,
) -> tuple[Installed, MockConfigEntry]:
    """An installed agent, set up in Home Assistant and connected."""
    installed = await emulator.install(name=name)
    entry = await add_entry(hass, emulator, installed, options=options)
    if name != "Home":
        hass.config_entries.async_update_entry(
            entry, title=name, data={**entry.data, CONF_AGENT_NAME: name}
        )
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    return installed, entry


async def call(hass: HomeAssistant, tool: str, **args: Any) -> Any:
    """Call a tool of the Pacerelle API as a conversation agent would; its data."""
    api = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    result = await api.async_call_tool(llm.ToolInput(tool_name=tool, tool_args=args))
    assert not result.error
    return result.data


async def human_says(
    emulator: EmulatorHandle, runtime: PacerelleRuntime, conversation_id: str, text: str
) -> str:
    """The owner's device sends `text`; returns once the agent holds it as pending."""
    message_id = await emulator.send(conversation_id, text=text)
    await held(runtime, message_id)
    return message_id


async def held(runtime: PacerelleRuntime, message_id: str) -> None:
    """Returns once the agent holds `message_id` as a pending request."""
    await wait_until(
        lambda: any(r.message_id == message_id for r in runtime.agent.pending_requests())
    )
