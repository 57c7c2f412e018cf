"""mark_processed, get_history, get_status and download_attachment against the emulator."""

import base64
import json
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from probatio import Invalid

from custom_components.pacerelle.client.limits import MAX_NOTE_CHARS
from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, human_writes, refused, stored_attachment

PHOTO = b"\xff\xd8\xff\xe0 a tiny jpeg" * 10


async def test_mark_processed(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    message_id = agent.spoken
    await refused(
        hass,
        "mark_processed",
        {"message_id": message_id, "note": "x" * (MAX_NOTE_CHARS + 1)},
        "note_too_long",
    )
    await refused(hass, "mark_processed", {"message_id": "unknown"}, "unknown_message")
    await wait_until(lambda: agent.runtime.status.pending == 1)
    note = "n" * MAX_NOTE_CHARS
    await call(hass, "mark_processed", {"message_id": message_id, "note": note}, response=False)
    assert agent.runtime.status.pending == 0
    history = await call(hass, "get_history", {})
    assert history["requests"][-1]["note"] == note
    assert history["requests"][-1]["pending"] is False
    assert history["requests"][-1]["processed_at"] is not None
    # Twice is a misuse too: it is no longer pending.
    await refused(hass, "mark_processed", {"message_id": message_id}, "unknown_message")


async def test_history_and_status(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    status = await call(hass, "get_status", {"config_entry_id": agent.entry.entry_id})
    assert status["state"] == "connected"
    assert (status["pending"], status["uncertain_sends"], status["last_message_at"]) == (0, 0, None)
    assert len(status["verification_code"].split(" ")) == 16
    first = await human_writes(emulator, agent, text="first")
    second = await human_writes(
        emulator,
        agent,
        text="with a photo",
        attachments=[
            {"name": "door.jpg", "mime": "image/jpeg", "data_b64": base64.b64encode(PHOTO).decode()}
        ],
    )
    reply = await call(
        hass, "send_message", {"text": "ok", "source_message_id": first["message_id"]}
    )
    status = await call(hass, "get_status", {"device_id": agent.device_id(hass)})
    assert status["pending"] == 2
    assert [item["message_id"] for item in status["pending_requests"]] == [
        first["message_id"],
        second["message_id"],
    ]
    assert status["last_message_at"] == second["received_at"]
    history = await call(hass, "get_history", {"limit": 1})
    assert [item["message_id"] for item in history["requests"]] == [second["message_id"]]
    history = await call(hass, "get_history", {"conversation_id": agent.conversation_id})
    assert [item["text"] for item in history["requests"]] == ["first", "with a photo"]
    assert [item["message_id"] for item in history["replies"]] == [reply["message_id"]]
    assert history["replies"][0]["source_message_id"] == first["message_id"]
    # No file key ever leaves through an action's response.
    dumped = json.dumps([status, history])
    assert "key_b64" not in dumped
    assert "iv_b64" not in dumped
    assert history["requests"][1]["attachments"][0]["name"] == "door.jpg"
    empty = await call(hass, "get_history", {"conversation_id": "conv_other"})
    assert empty == {"requests": [], "replies": []}


async def test_download_attachment(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    text_only = agent.spoken
    files = [
        {"name": "door.jpg", "mime": "image/jpeg", "data_b64": base64.b64encode(PHOTO).decode()},
        {
            "name": "../../notes.txt",
            "mime": "text/plain",
            "data_b64": base64.b64encode(b"hi").decode(),
        },
    ]
    message = await human_writes(emulator, agent, text="two files", attachments=files)
    [photo, notes] = message["attachments"]
    allowed = tmp_path / "media"
    folder = allowed / "inbox"
    folder.mkdir(parents=True)
    await refused(
        hass,
        "download_attachment",
        {"message_id": message["message_id"], "folder": str(folder)},
        "path_not_allowed",
    )
    hass.config.allowlist_external_dirs = {str(allowed)}
    await refused(
        hass,
        "download_attachment",
        {"message_id": "unknown", "folder": str(folder)},
        "unknown_message",
    )
    await refused(
        hass,
        "download_attachment",
        {"message_id": text_only, "folder": str(folder)},
        "no_attachments",
    )
    await refused(
        hass,
        "download_attachment",
        {"message_id": message["message_id"], "attachment_id": "nope", "folder": str(folder)},
        "unknown_attachment",
    )
    one = await call(
        hass,
        "download_attachment",
        {"message_id": message["message_id"], "attachment_id": photo["id"], "folder": str(folder)},
    )
    assert [item["path"] for item in one["files"]] == [str(folder / "door.jpg")]
    assert (folder / "door.jpg").read_bytes() == PHOTO
    both = await call(
        hass, "download_attachment", {"message_id": message["message_id"], "folder": str(folder)}
    )
    # Never overwritten, never outside the folder.
    assert [Path(item["path"]).name for item in both["files"]] == ["door (1).jpg", "notes.txt"]
    assert (folder / "notes.txt").read_bytes() == b"hi"
    assert both["files"][1]["id"] == notes["id"]
    assert sorted(path.name for path in allowed.iterdir()) == ["inbox"]


async def test_download_failures_are_explained(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    (tmp_path / "media").mkdir()
    hass.config.allowlist_external_dirs = {str(tmp_path / "media")}
    file = {"name": "a.txt", "data_b64": base64.b64encode(b"a").decode()}
    message = await human_writes(emulator, agent, text="", attachments=[file])
    descriptor = stored_attachment(agent, message["message_id"])
    await emulator.faults(route_status={f"/agent/blobs/{descriptor['blob_id']}": 404})
    request = {"message_id": message["message_id"], "folder": str(tmp_path / "media")}
    error = await refused(hass, "download_attachment", request, "download_failed")
    assert "404" in str(error)
    assert list((tmp_path / "media").iterdir()) == []


async def test_an_agent_named_twice_names_both_fields(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    device = dr.async_get(hass).async_get_device_by_identifier(
        (DOMAIN, agent.entry.entry_id), agent.entry.entry_id
    )
    assert device is not None
    both = {"config_entry_id": agent.entry.entry_id, "device_id": device.id}
    with pytest.raises(Invalid) as refused:
        await call(hass, "get_status", both)
    assert "config_entry_id and device_id" in str(refused.value)
