"""Options flow: the agent's settings, through the frontend's options API."""

from pathlib import Path

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.options import AgentOptions
from tests.helpers.config_flow_driver import FlowDriver
from tests.helpers.options_flow import installed_entry, open_options, submit_options, suggested

pytest_plugins = ["tests.helpers.config_flow_fixtures"]


def test_defaults_work_for_an_entry_without_options() -> None:
    assert AgentOptions.from_options({}) == AgentOptions(media_folder="", assist_agent=None)
    # Settings of a newer version are ignored by this one, not fatal.
    # A setting of later versions, and one removed (`encrypted`: a development override now).
    assert AgentOptions.from_options({"encrypted": False, "later_setting": 3}) == AgentOptions()


async def test_options_shown_saved_and_reloaded(
    hass: HomeAssistant, driver: FlowDriver, tmp_path: Path
) -> None:
    entry = await installed_entry(hass, driver)
    form = await open_options(driver, entry)
    assert (form["type"], form["step_id"]) == ("form", "init")
    assert suggested(form) == {
        "media_folder": "",
        "assist_agent": None,
        "assist_in_groups": False,
        "llm_conversations": [],
        "voice_pipeline": "none",
        "voice_transcripts": False,
        "voice_spoken_answer": False,
    }
    # The LLM API's scope is offered from the conversations the agent knows; the owner's
    # direct one by its name (its subentry's title, named with the entry).
    [scope] = [field for field in form["data_schema"] if field["name"] == "llm_conversations"]
    direct = entry.data["conversation_id"]
    assert scope["selector"]["select"]["options"] == [{"value": direct, "label": "Owner"}]
    assert "debugging" not in {field["name"] for field in form["data_schema"]}

    folder = tmp_path / "media" / "pacerelle"
    folder.mkdir(parents=True)
    hass.config.allowlist_external_dirs.add(str(tmp_path / "media"))
    chosen = {
        "media_folder": str(folder),
        "assist_agent": "conversation.home_assistant",
        "assist_in_groups": True,
        "llm_conversations": ["conv_family"],
        "voice_pipeline": "preferred",
        "voice_transcripts": True,
        "voice_spoken_answer": True,
    }
    result = await submit_options(driver, form, chosen)
    assert result["type"] == "create_entry"
    assert entry.options == chosen
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED

    # Shown again as saved; emptied fields really become empty.
    form = await open_options(driver, entry)
    assert suggested(form) == chosen
    result = await submit_options(driver, form, {})
    assert result["type"] == "create_entry"
    assert AgentOptions.from_options(entry.options) == AgentOptions()


async def test_media_folder_must_be_usable(
    hass: HomeAssistant, driver: FlowDriver, tmp_path: Path
) -> None:
    entry = await installed_entry(hass, driver)
    hass.config.allowlist_external_dirs.add(str(tmp_path))
    form = await open_options(driver, entry)
    for folder in ("/etc", "relative/folder", str(tmp_path / "missing")):
        body = {"media_folder": folder}
        form = await submit_options(driver, form, body)
        assert (form["type"], form["errors"]) == ("form", {"media_folder": "invalid_media_folder"})
        # The rejected value stays in the field, to be corrected.
        assert suggested(form)["media_folder"] == folder
    assert entry.options == {}
