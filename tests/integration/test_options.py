"""The agent's settings: an entry without options works on the defaults, unknown keys are
ignored, and what is saved reads back (the LLM's conversations as a list in the entry, a
tuple in the settings)."""

from custom_components.pacerelle.options import (
    CONF_ASSIST_AGENT,
    CONF_LLM_CONVERSATIONS,
    AgentOptions,
)


def test_an_entry_without_options_takes_the_defaults() -> None:
    options = AgentOptions.from_options({})
    assert options == AgentOptions()
    assert options.assist_agent is None
    assert options.llm_conversations == ()


def test_saved_options_read_back_and_unknown_keys_are_ignored() -> None:
    saved = {CONF_ASSIST_AGENT: "conversation.home", CONF_LLM_CONVERSATIONS: ["c1", "c2"]}
    options = AgentOptions.from_options({**saved, "removed_in_0_3": True})
    assert options.llm_conversations == ("c1", "c2")
    stored = options.as_options()
    assert stored[CONF_LLM_CONVERSATIONS] == ["c1", "c2"]
    assert "removed_in_0_3" not in stored
    assert AgentOptions.from_options(stored) == options
