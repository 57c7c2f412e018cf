"""What people write, type into a form or say is nowhere on Home Assistant's disk outside the
encrypted store (event.py): the event entities show no content, so Home Assistant's restore
state (dumped as at its final write, into `.storage/core.restore_state` and every backup)
holds none, and no user who may read the entities sees any."""

import asyncio
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import restore_state
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.options import CONF_VOICE_PIPELINE, CONF_VOICE_TRANSCRIPTS
from tests.helpers.agent import start_agent
from tests.helpers.ask import ask_script, run_script, widget_on_device
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.voice import send_voice_note
from tests.helpers.voice_assist import async_voice_assistant, wav_note

WRITTEN = "The spare key is under the mat"
TYPED = "hunter2-typed-password"
SPOKEN = "the alarm code is 4711"


async def test_no_text_answer_or_transcript_is_kept_or_shown(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_storage: dict[str, Any]
) -> None:
    voice = await async_voice_assistant(hass)
    voice.stt.text = SPOKEN
    options = {CONF_VOICE_PIPELINE: voice.pipeline.id, CONF_VOICE_TRANSCRIPTS: True}
    agent = await start_agent(hass, emulator, options=options, spoken=True)
    messages = async_capture_events(hass, EVENT_MESSAGE)
    await ask_script(
        hass,
        {
            "kind": "form",
            "title": "Wi-Fi password?",
            "fields": [{"name": "password", "label": "Password", "type": "text"}],
            "timeout": 30,
        },
    )
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 1)
    await emulator.send(
        agent.conversation_id,
        widget_response={"ref": question["id"], "value": {"password": TYPED}},
    )
    assert (await asyncio.wait_for(script, 30))["value"] == {"password": TYPED}
    await emulator.send(agent.conversation_id, text=WRITTEN)
    note, _ = wav_note(0.5)
    await send_voice_note(emulator, agent.conversation_id, note, "audio/wav", 500)
    await wait_until(lambda: any(event.data["transcript"] == SPOKEN for event in messages))
    # Automations had every one of them live.
    assert WRITTEN in [event.data["text"] for event in messages]

    entities = [state for state in hass.states.async_all("event") if state.attributes]
    shown = json.dumps([state.as_dict() for state in entities], default=str)
    assert entities
    assert '"message_id"' in shown  # the entities show that something arrived, and when
    await restore_state.async_get(hass).async_dump_states()
    kept = json.dumps(hass_storage[restore_state.STORAGE_KEY])
    restored = [
        item["state"]["entity_id"]
        for item in hass_storage[restore_state.STORAGE_KEY]["data"]
        if item["state"]["entity_id"].startswith("event.")
    ]
    assert {state.entity_id for state in entities} <= set(restored)
    for secret in (WRITTEN, TYPED, SPOKEN):
        assert secret not in shown
        assert secret not in kept
