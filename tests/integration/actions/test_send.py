"""pacerelle.send_message through Home Assistant and the running emulator, misuse included."""

import base64
from pathlib import Path

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.agent_core import ConnectionState
from tests.helpers.agent import start_agent
from tests.helpers.cameras import PNG, add_camera
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, human_writes, received, refused


async def test_answer_goes_back_to_the_request(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    request = await human_writes(emulator, agent, text="Is the door locked?", device_id="2")
    result = await call(
        hass,
        "send_message",
        {"text": "Yes, locked.", "source_message_id": request["message_id"]},
    )
    inbox = await received(emulator, agent, 1)
    assert inbox[0]["message_id"] == result["message_id"]
    assert (inbox[0]["text"], inbox[0]["device_id"], inbox[0]["history"]) == (
        "Yes, locked.",
        "2",
        "valid",
    )
    assert inbox[0]["reply_to_message_id"] == request["message_id"]
    assert result["conversation_id"] == agent.conversation_id
    assert result["to_device_id"] == "2"
    assert result["status"] == "sent"


async def test_targets_by_entry_device_and_explicit_conversation(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    first = agent.spoken
    await call(hass, "send_message", {"config_entry_id": agent.entry.entry_id, "text": "one"})
    await call(hass, "send_message", {"device_id": agent.device_id(hass), "text": "two"})
    await call(
        hass,
        "send_message",
        {
            "text": "three",
            "conversation_id": agent.conversation_id,
            "to": agent.installed.owner_id,
            "reply_to_message_id": first,
        },
        response=False,
    )
    inbox = await received(emulator, agent, 3)
    assert [item["text"] for item in inbox] == ["one", "two", "three"]
    assert inbox[2]["reply_to_message_id"] == first


async def test_the_user_speaks_first(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    error = await refused(hass, "send_message", {"text": "Hello?"}, "not_spoken_yet")
    assert error.translation_placeholders["agent_name"] == "Home"
    assert "first message" in str(error)
    assert await emulator.inbox(agent.conversation_id) == []


async def test_misuse_is_refused_with_a_translated_error(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    source = agent.spoken
    await refused(
        hass, "send_message", {"text": "x", "source_message_id": "nope"}, "unknown_message"
    )
    await refused(
        hass,
        "send_message",
        {"text": "x", "source_message_id": source, "conversation_id": "conv_other"},
        "target_conflict",
    )
    await refused(hass, "send_message", {"text": "  "}, "text_required")
    await refused(hass, "send_message", {"text": "x" * 70_000}, "text_too_long")
    await refused(
        hass,
        "send_message",
        {"text": "x", "config_entry_id": "missing"},
        "service_config_entry_not_found",
    )
    await refused(hass, "send_message", {"text": "x", "device_id": "missing"}, "unknown_device")
    outside = tmp_path / "secret.txt"
    outside.write_text("private")
    await refused(
        hass, "send_message", {"text": "x", "attachments": [str(outside)]}, "path_not_allowed"
    )
    await refused(
        hass, "send_message", {"text": "x", "attachments": ["relative.txt"]}, "path_not_allowed"
    )
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    await refused(
        hass,
        "send_message",
        {"text": "x", "attachments": [str(tmp_path / "missing.txt")]},
        "file_unreadable",
    )
    await refused(
        hass,
        "send_message",
        {"text": "x", "attachments": [str(outside)] * 11},
        "too_many_attachments",
    )
    assert await emulator.inbox(agent.conversation_id) == []


async def test_files_are_sent_encrypted(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.7 monthly energy report")
    result = await call(hass, "send_message", {"text": "Your report", "attachments": [str(report)]})
    assert result["attachments"] == [{"name": "report.pdf", "mime": "application/pdf"}]
    inbox = await received(emulator, agent, 1)
    assert inbox[0]["kind"] == "chat.message"
    assert inbox[0]["payload"]["text"] == "Your report"
    # The relay sees neither the name nor the type; the person's device gets both.
    assert [(a["name"], a["mime"]) for a in inbox[0]["attachments"]] == [
        ("attachment", "application/octet-stream")
    ]
    [file] = inbox[0]["files"]
    assert (file["name"], file["mime"]) == ("report.pdf", "application/pdf")
    assert base64.b64decode(file["content_b64"]) == report.read_bytes()


async def test_camera_snapshot_is_sent(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    await add_camera(hass, "Doorbell", "doorbell")
    agent = await start_agent(hass, emulator, spoken=True)
    await call(
        hass,
        "send_message",
        {"text": "Someone rang", "camera_snapshots": "camera.doorbell"},
        response=False,
    )
    inbox = await received(emulator, agent, 1)
    [file] = inbox[0]["files"]
    assert (file["name"], file["mime"]) == ("doorbell.png", "image/png")
    assert base64.b64decode(file["content_b64"]) == PNG
    await refused(
        hass, "send_message", {"text": "x", "camera_snapshots": "camera.missing"}, "snapshot_failed"
    )


async def test_sending_while_disconnected(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await emulator.faults(gateway_status=503, drop_connections=True)
    await wait_until(lambda: agent.runtime.status.state is not ConnectionState.CONNECTED)
    # expire_after 0: no waiting in the queue (tests/client/values/test_send_queue.py covers
    # the queue).
    error = await refused(hass, "send_message", {"text": "x", "expire_after": 0}, "not_connected")
    assert "Home" in str(error)
