"""Prekeys, uncertain sends, identity changes, attachments and groups, against the emulator."""

import asyncio
import base64
import logging
import os
import time

import pytest

from custom_components.pacerelle.client.attachments import OutgoingFile
from custom_components.pacerelle.client.signal.prekeys import (
    ONE_TIME_PREKEY_LOW_WATER,
    ONE_TIME_PREKEY_TARGET,
    ROTATION_INTERVAL,
)
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.owner_group import owner_group_key, owner_group_message


async def _status(emulator: EmulatorHandle, agent_id: str) -> dict[str, object]:
    status: dict[str, object] = await emulator.admin("GET", f"/agents/{agent_id}")
    return status


async def test_prekeys_published_after_saving_then_replenished_and_rotated(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    old = AgentSignalState.new(now=int(time.time()) - ROTATION_INTERVAL * 2)
    data = AgentData(old)
    async with connected_agent(emulator, installed, recorder, data=data) as agent:
        status = await _status(emulator, installed.agent_id)
        assert status["one_time_prekeys"] == ONE_TIME_PREKEY_TARGET
        # Due for rotation at connect: a new signed/Kyber pair, saved before publication.
        saved = AgentData.from_document(recorder.documents[0])
        assert saved is not None
        rotated = saved.signal.prekeys
        assert rotated.signed_prekey.prekey_id != old.prekeys.signed_prekey.prekey_id
        assert [r.signed.prekey_id for r in rotated.retired] == [
            old.prekeys.signed_prekey.prekey_id
        ]
        published = await emulator.admin("GET", f"/agents/{installed.agent_id}")
        assert published["identity_key"] == base64.b64encode(rotated.identity_key).decode()
        # New devices each take a one-time prekey; below the low-water mark they are topped up.
        used = ONE_TIME_PREKEY_TARGET - ONE_TIME_PREKEY_LOW_WATER + 1
        for device in range(2, 2 + used):
            await emulator.send(installed.conversation_id, text="hi", device_id=str(device))
        await wait_for(lambda: len(recorder.delivered) == used)
        await wait_for(
            lambda: len(agent.data.signal.prekeys.one_time_prekeys) == ONE_TIME_PREKEY_TARGET
        )
        await emulator.wait_agent(
            installed.agent_id, lambda s: s["one_time_prekeys"] == ONE_TIME_PREKEY_TARGET
        )
        # Every key we hold is recorded as published (ids of used keys are pruned later).
        await wait_for(
            lambda: {p.prekey_id for p in agent.data.signal.prekeys.one_time_prekeys}
            <= agent.data.published_prekeys
        )


async def test_send_then_drop_is_an_uncertain_send(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        message_id = await emulator.send(installed.conversation_id, text="status?")
        await wait_for(lambda: len(recorder.delivered) == 1)
        reply = await agent.send_text("all good", source_message_id=message_id)
        await emulator.faults(drop_connections="abort")
        await wait_for(lambda: agent.status.uncertain_sends == 1)
        saved = AgentData.from_document(recorder.last_document)
        assert saved is not None
        assert [s.message_id for s in saved.uncertain] == [reply.message_id]
        assert saved.history.replies[-1].status == "uncertain"


async def test_changed_identity_of_a_reinstalled_app_is_reported_and_accepted(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        code = agent.verification_code
        await emulator.send(installed.conversation_id, text="before")
        await wait_for(lambda: len(recorder.delivered) == 1)
        peer = PeerAddress(installed.owner_id, installed.conversation_id, 1)
        before = agent.data.signal.record(peer).trusted_identity
        reset = f"/conversations/{installed.conversation_id}/devices/1/reset"
        with caplog.at_level(logging.WARNING):
            await emulator.admin("POST", reset)
            await wait_for(
                lambda: f"The identity key of {installed.owner_id} changed" in caplog.text
            )
        await emulator.send(installed.conversation_id, text="after reinstall")
        await wait_for(lambda: len(recorder.delivered) == 2)
        assert recorder.delivered[1].text == "after reinstall"
        # The new key is the session's now (the trust door judges it as a new key).
        after = agent.data.signal.record(peer).trusted_identity
        assert after is not None
        assert after != before
        assert agent.verification_code == code  # our own identity never changes
        reply = await agent.send_text(
            "welcome back", source_message_id=recorder.delivered[1].message_id
        )
        inbox = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (inbox[0]["message_id"], inbox[0]["text"]) == (reply.message_id, "welcome back")


async def test_attachments_both_ways(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        photo = os.urandom(3000)
        files = [
            {"data_b64": base64.b64encode(photo).decode(), "name": "door.jpg", "mime": "image/jpeg"}
        ]
        message_id = await emulator.send(installed.conversation_id, text="look", attachments=files)
        await wait_for(lambda: len(recorder.delivered) == 1)
        request = recorder.delivered[0]
        assert (request.kind, request.text) == ("chat.message", "look")
        (attachment,) = request.attachments
        assert (attachment["name"], attachment["mime"], attachment["size"]) == (
            "door.jpg",
            "image/jpeg",
            3000,
        )
        assert not {"key_b64", "iv_b64", "blob_id", "sha256"} & set(attachment)  # the client's
        assert await agent.download(message_id, 0) == photo

        snapshot = os.urandom(5000)
        snap = OutgoingFile("snap.png", "image/png", snapshot)
        await agent.send_text("here", source_message_id=message_id, files=[snap])
        (entry,) = await emulator.wait_inbox(installed.conversation_id, 1)
        assert entry["kind"] == "chat.message"
        assert entry["attachments"][0]["name"] == "attachment"  # the relay sees no metadata
        (opened,) = entry["files"]
        assert (opened["name"], opened["mime"]) == ("snap.png", "image/png")
        assert base64.b64decode(opened["content_b64"]) == snapshot


async def test_group_message_opens_with_a_group_key_fetched_over_signal(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        await emulator.send(installed.conversation_id, text="hello")
        await wait_for(lambda: len(recorder.delivered) == 1)
        conversation = installed.conversation_id
        key, device = await owner_group_key(emulator, installed)
        await owner_group_message(emulator, installed, key, "group-msg-1", "to everyone")
        await wait_for(lambda: len(recorder.delivered) == 2)
        request = recorder.delivered[1]
        assert (request.text, request.is_group) == ("to everyone", True)
        learned = agent.data.conversations.sealing_group_key(conversation)
        assert learned is not None
        assert (learned.name, learned.raw_key) == (key.name, key.raw_key)
        # Its sender is the session that delivered it, with that session's identity key.
        identity = base64.b64decode(device.identity_key_b64())
        assert (learned.sender_id, learned.sender_device_id, learned.sender_identity) == (
            installed.owner_id,
            "1",
            identity,
        )
        await asyncio.sleep(0)


def test_group_payload_round_trip_and_wrong_key() -> None:
    key = groups.GroupKey("c1", "k", 2, os.urandom(32))
    message = groups.parse_message(groups.seal_message(key, "hi"))
    assert groups.open_message(key, message) == "hi"
    other = groups.GroupKey("c1", "k", 3, key.raw_key)  # same bytes, other epoch: other AAD
    try:
        groups.open_message(other, message)
    except groups.GroupError:
        pass
    else:
        raise AssertionError("a group message opened under another epoch")


async def test_widget_out_and_answer_in(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        message_id = await emulator.send(installed.conversation_id, text="unlock the door?")
        await wait_for(lambda: len(recorder.delivered) == 1)
        widget = {
            "type": "widget.standard",
            "id": "confirm-1",
            "v": 1,
            "kind": "confirm",
            "spec": {"title": "Unlock the front door?"},
        }
        sent = await agent.send_widget(widget, source_message_id=message_id)
        assert sent.kind == "widget.standard"
        (entry,) = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (entry["kind"], entry["payload"]) == ("widget.standard", widget)
        await emulator.send(
            installed.conversation_id, widget_response={"ref": "confirm-1", "value": True}
        )
        await wait_for(lambda: len(recorder.delivered) == 2)
        answer = recorder.delivered[1]
        assert answer.kind == "widget.response"
        assert answer.widget is not None
        assert (answer.widget["ref"], answer.widget["value"]) == ("confirm-1", True)
