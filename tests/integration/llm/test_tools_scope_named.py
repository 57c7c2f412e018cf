"""The LLM API's conversation scope (options flow) lists named conversations by their names
(their subentry's title), the other seen ones as "Add conversation" shows them; what is saved
is the conversation id, and the chosen group is then in the tools' scope."""

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.pacerelle.llm.tools import LlmScope
from custom_components.pacerelle.options import CONF_LLM_CONVERSATIONS
from tests.helpers.agent import add_group, start_agent
from tests.helpers.conversations import name_conversation
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.llm import call
from tests.helpers.services import human_writes

ANA, BEN = "usr_ana", "usr_ben"


def scope_options(form: Any) -> dict[str, str]:
    """The scope list's choices, value -> label."""
    assert form["type"] is FlowResultType.FORM, form
    for marker, selector in form["data_schema"].schema.items():
        if str(marker) == CONF_LLM_CONVERSATIONS:
            return {o["value"]: o["label"] for o in selector.config["options"]}
    raise AssertionError("no scope list")


async def test_the_scope_option_lists_named_conversations_by_name(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    family, _ = await family_group(emulator, agent)
    neighbours = await add_group(emulator, agent, "Neighbours", [ANA, BEN])
    await human_writes(emulator, agent, text="hello")
    await member_writes(emulator, agent, family, text="hi", user_id=ANA)
    await member_writes(emulator, agent, neighbours, text="parcel?", user_id=BEN)
    await name_conversation(hass, agent, family, "Family")

    form = await hass.config_entries.options.async_init(agent.entry.entry_id)
    choices = scope_options(form)
    assert set(choices) == {agent.conversation_id, family, neighbours}
    assert choices[family] == "Family"
    # Not named: its id and members, as the naming form lists it.
    assert choices[neighbours].endswith(f" · {neighbours}")
    assert BEN in choices[neighbours]

    done = await hass.config_entries.options.async_configure(
        form["flow_id"], {CONF_LLM_CONVERSATIONS: [family]}
    )
    assert done["type"] is FlowResultType.CREATE_ENTRY, done
    assert agent.entry.options[CONF_LLM_CONVERSATIONS] == [family]
    await hass.async_block_till_done()
    assert LlmScope.of_entry(agent.entry).conversations == {family}
    # Shown again: the saved id under its name.
    again = await hass.config_entries.options.async_init(agent.entry.entry_id)
    assert scope_options(again)[family] == "Family"
    await hass.config_entries.options.async_configure(
        again["flow_id"], {CONF_LLM_CONVERSATIONS: [family]}
    )
    # The tools now read the group (and not the owner's direct conversation).
    await hass.async_block_till_done()
    history = await call(hass, "get_history")
    assert {r["conversation_id"] for r in history["requests"]} == {family}
