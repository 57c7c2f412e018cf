"""The options of an agent that is not running (options_flow.py): with no agent to ask which
conversations it has seen, the LLM API's list still offers the owner's conversation and the
named ones by their names and the chosen ones by their ids, and saving keeps what is chosen."""

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.options import AgentOptions
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.options_flow import installed_entry, open_options, submit_options, suggested

pytest_plugins = ["tests.helpers.config_flow_fixtures"]

TYPED = "conv_typed_earlier"


async def test_options_of_a_stopped_agent_offer_what_the_entry_knows(
    hass: HomeAssistant, driver: FlowDriver
) -> None:
    entry = await installed_entry(hass, driver)
    await hass.async_block_till_done()
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert entry.state is ConfigEntryState.NOT_LOADED
    assert getattr(entry, "runtime_data", None) is None
    hass.config_entries.async_update_entry(
        entry, options=AgentOptions(llm_conversations=(TYPED,)).as_options()
    )

    form = await open_options(driver, entry)
    assert (form["type"], form["step_id"]) == ("form", "init")
    [scope] = [field for field in form["data_schema"] if field["name"] == "llm_conversations"]
    direct = str(entry.data["conversation_id"])
    assert scope["selector"]["select"]["options"] == [
        {"value": direct, "label": "Owner"},
        {"value": TYPED, "label": TYPED},
    ]
    assert suggested(form)["llm_conversations"] == [TYPED]

    saved = await submit_options(
        driver, form, {"llm_conversations": [direct, TYPED], "assist_in_groups": True}
    )
    assert saved["type"] == "create_entry"
    await hass.async_block_till_done()
    options = AgentOptions.from_options(entry.options)
    assert (options.llm_conversations, options.assist_in_groups) == ((direct, TYPED), True)
