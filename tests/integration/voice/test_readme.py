"""README "Talk to your home by voice": its example automation, run on a real voice note."""

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.options import CONF_VOICE_PIPELINE, CONF_VOICE_TRANSCRIPTS
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.readme import automate, example
from tests.helpers.runtime import wait_until
from tests.helpers.voice import send_voice_note
from tests.helpers.voice_assist import async_voice_assistant, wav_note

SHOPPING_LIST = "todo.shopping_list"


@pytest.fixture
async def shopping_list(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    entry = MockConfigEntry(domain="shopping_list")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get(SHOPPING_LIST) is not None


@pytest.mark.usefixtures("shopping_list")
@pytest.mark.parametrize(
    "heard",
    [
        "Add milk",
        # The demo's own phrase (scripts/lib/demo/pacerelle_demo/commands.jsgf).
        "add milk to the shopping list",
        # A cloud speech-to-text's capitals and full stop.
        "Add milk to the shopping list.",
    ],
)
async def test_a_shopping_list_filled_by_voice(
    hass: HomeAssistant, emulator: EmulatorHandle, heard: str
) -> None:
    voice = await async_voice_assistant(hass)
    voice.stt.text = heard
    options = {CONF_VOICE_PIPELINE: voice.pipeline.id, CONF_VOICE_TRANSCRIPTS: True}
    started = await start_agent(hass, emulator, options=options)
    installed, entry = started.installed, started.entry
    await automate(hass, example("A shopping list filled by voice"))
    note, _ = wav_note(0.5)
    asked = await send_voice_note(emulator, installed.conversation_id, note, "audio/wav", 500)

    [reply] = await emulator.wait_inbox(installed.conversation_id, 1)
    assert (reply["text"], reply["reply_to_message_id"]) == (
        "Added milk to the shopping list.",
        asked,
    )
    await wait_until(lambda: hass.states.get(SHOPPING_LIST).state == "1")
    items = await hass.services.async_call(
        "todo",
        "get_items",
        target={"entity_id": SHOPPING_LIST},
        blocking=True,
        return_response=True,
    )
    assert [item["summary"] for item in items[SHOPPING_LIST]["items"]] == ["milk"]
    # Marked processed: requests do not pile up.
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.pending == 0)
    assert await hass.config_entries.async_unload(entry.entry_id)
