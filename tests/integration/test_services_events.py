"""The event schema (events.py) as automations see it, and files saved to the media folder."""

import base64
import json
import logging
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.pacerelle.events import EVENT_WIDGET_RESPONSE
from custom_components.pacerelle.options import CONF_MEDIA_FOLDER
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import human_writes

MESSAGE_KEYS = {
    "entry_id",
    "agent_id",
    "conversation_id",
    "message_id",
    "sender_id",
    "sender_device_id",
    "group",
    "kind",
    "text",
    "reply_to_message_id",
    "attachments",
    "widget",
    "widget_response",
    "received_at",
    "relayed_at",
    "transcript",
    "trusted",
    "trust_state",
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_message_and_widget_response_events(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    answers = async_capture_events(hass, EVENT_WIDGET_RESPONSE)
    text = await human_writes(emulator, agent, text="Hi", device_id="2", reply_to_message_id="m0")
    assert set(text) == MESSAGE_KEYS
    assert text["entry_id"] == agent.entry.entry_id
    assert text["agent_id"] == agent.installed.agent_id
    assert (text["kind"], text["text"], text["sender_device_id"]) == ("text", "Hi", "2")
    assert text["reply_to_message_id"] == "m0"
    assert (text["attachments"], text["widget"], text["widget_response"]) == ([], None, None)
    assert text["received_at"].endswith("+00:00")
    # The owner's first device is trusted on first use.
    assert (text["trusted"], text["trust_state"]) == (True, "trusted")
    assert answers == []

    answer = await human_writes(
        emulator, agent, widget_response={"ref": "garage-1", "value": {"ok": True}}
    )
    assert answer["kind"] == "widget.response"
    assert answer["widget_response"] == {
        "widget_id": "garage-1",
        "value": {"ok": True},
        "cancelled": False,
    }
    await wait_until(lambda: len(answers) == 1)
    assert answers[0].data == {
        "entry_id": agent.entry.entry_id,
        "agent_id": agent.installed.agent_id,
        "conversation_id": agent.conversation_id,
        "message_id": answer["message_id"],
        "sender_id": agent.installed.owner_id,
        "sender_device_id": "1",
        "widget_id": "garage-1",
        "value": {"ok": True},
        "cancelled": False,
        "received_at": answer["received_at"],
        # Device 1 came after device 2, with a key of its own: not trusted until confirmed.
        "trusted": False,
        "trust_state": "unverified",
    }
    await human_writes(emulator, agent, widget_response={"ref": "garage-1", "cancelled": True})
    await wait_until(lambda: len(answers) == 2)
    assert (answers[1].data["cancelled"], answers[1].data["value"]) == (True, None)


async def test_files_are_saved_before_their_event(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    media = tmp_path / "media" / "pacerelle"
    media.mkdir(parents=True)
    hass.config.allowlist_external_dirs = {str(tmp_path / "media")}
    agent = await start_agent(hass, emulator, options={CONF_MEDIA_FOLDER: str(media)})
    photo = b"\xff\xd8 photo" * 50
    file_id = await emulator.send(
        agent.conversation_id,
        text="look",
        attachments=[
            {"name": "door.jpg", "mime": "image/jpeg", "data_b64": b64(photo), "width": 640},
            {"name": "door.jpg", "mime": "image/jpeg", "data_b64": b64(b"second")},
        ],
    )
    # Sent right after: its event waits for the files of the one before.
    text_id = await emulator.send(agent.conversation_id, text="did you see it?")
    await wait_until(lambda: len(agent.events) == 2)
    assert [event.data["message_id"] for event in agent.events] == [file_id, text_id]
    first = agent.events[0].data
    paths = [item["path"] for item in first["attachments"]]
    assert paths == [
        str(media / file_id / "door.jpg"),
        str(media / file_id / "door (1).jpg"),
    ]
    assert Path(paths[0]).read_bytes() == photo
    assert Path(paths[1]).read_bytes() == b"second"
    assert first["attachments"][0]["width"] == 640
    assert "key_b64" not in json.dumps([event.data for event in agent.events])
    assert "path" not in json.dumps(agent.events[1].data["attachments"])


async def test_a_file_that_cannot_be_saved_still_fires_its_event(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The folder was allowed when chosen, and no longer is.
    media = tmp_path / "elsewhere"
    media.mkdir()
    agent = await start_agent(hass, emulator, options={CONF_MEDIA_FOLDER: str(media)})
    caplog.set_level(logging.WARNING)
    message = await human_writes(
        emulator,
        agent,
        text="",
        attachments=[{"name": "a.txt", "data_b64": b64(b"a")}],
    )
    assert [item["path"] for item in message["attachments"]] == [None]
    assert "Could not save attachment" in caplog.text
    assert list(media.iterdir()) == []
