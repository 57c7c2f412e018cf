"""Sender outcomes against the emulator: a reply to a request already handled, a send the
relay refuses (marked failed), explicit group targets, attachments whose descriptor or key
is wrong (refused as bad_attachment, nothing returned)."""

import base64
import os

import pytest

from custom_components.pacerelle.client.attachments import OutgoingFile, public_descriptor
from custom_components.pacerelle.client.errors import PacerelleError, SendError
from custom_components.pacerelle.client.limits import MAX_FILE_BYTES, MAX_SEND_TEXT_CHARS
from custom_components.pacerelle.client.relay.frames import group_recipient
from custom_components.pacerelle.client.values.history import FAILED
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle


async def test_a_reply_to_a_request_already_handled_still_finds_it(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        message_id = await emulator.send(installed.conversation_id, text="lights?")
        await wait_for(lambda: len(recorder.delivered) == 1)
        await agent.mark_processed(message_id)
        assert agent.pending_requests() == []
        found = agent.find_request(message_id)  # from history now
        assert found is not None
        assert found.text == "lights?"
        reply = await agent.send_text("done", source_message_id=message_id)
        (entry,) = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (entry["message_id"], entry["text"]) == (reply.message_id, "done")
        with pytest.raises(SendError) as caught:
            await agent.send_text("to nobody", source_message_id="m-unknown")
        assert caught.value.reason == "unknown_request"


async def test_a_send_the_relay_refuses_is_marked_failed(emulator: EmulatorHandle) -> None:
    """The relay answers ERROR naming our message: its history entry becomes failed."""
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        reply = await agent.send_text("hello stranger", to="u-not-in-this-conversation")
        await wait_for(
            lambda: any(
                r.message_id == reply.message_id and r.status == FAILED
                for r in agent.history().replies
            )
        )
        assert await emulator.inbox(installed.conversation_id) == []


async def test_an_explicit_group_target_has_no_device(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        group = group_recipient("c-group")
        target = agent._sender.resolve(None, "c-group", group, "7")
        assert (target.conversation_id, target.to, target.device_id) == ("c-group", group, None)


async def test_attachments_with_a_bad_descriptor_or_key_are_refused(
    emulator: EmulatorHandle,
) -> None:
    """The client's own download (attachments.py) takes a file only as it was declared."""
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        files = agent._files
        content = os.urandom(1000)
        (secret,) = await files.upload_all([OutgoingFile("a.bin", "application/x", content)])
        assert await files.download(secret) == content
        public = public_descriptor(secret)
        assert (public["name"], public["mime"]) == ("attachment", "application/octet-stream")
        assert "key_b64" not in public
        for broken in (
            {k: v for k, v in secret.items() if k != "key_b64"},
            secret | {"iv_b64": "not base64!"},
            {k: v for k, v in secret.items() if k != "blob_id"},
        ):
            with pytest.raises(SendError, match="no key, IV or blob id") as caught:
                await files.download(broken)
            assert caught.value.reason == "bad_attachment"
        refusals = {
            "does not decrypt": secret | {"key_b64": base64.b64encode(bytes(32)).decode()},
            "digest does not match": secret | {"sha256": "0" * 64},
            "1000 bytes, not the 1001 declared": secret | {"size": 1001},
            "larger than the 10 bytes": secret | {"size": 10},
            f"over {MAX_FILE_BYTES}": secret | {"size": MAX_FILE_BYTES + 1},
            "no declared size": {k: v for k, v in secret.items() if k != "size"},
        }
        for message, descriptor in refusals.items():
            with pytest.raises(SendError, match=message) as caught:
                await files.download(descriptor)
            assert caught.value.reason == "bad_attachment"


async def test_an_optional_file_whose_upload_fails_is_left_out_a_required_one_refuses(
    emulator: EmulatorHandle,
) -> None:
    """A spoken answer (required=False) is dropped when the relay refuses its upload and the
    text goes alone; a file the caller asked for fails the send, which then sends nothing."""
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        message_id = await emulator.send(installed.conversation_id, text="hi")
        await wait_for(lambda: len(recorder.delivered) == 1)
        await emulator.faults(route_status={"/agent/blobs": 503})
        spoken = OutgoingFile("answer.mp3", "audio/mpeg", b"sound", required=False)
        await agent.send_text("the text", source_message_id=message_id, files=[spoken])
        (entry,) = await emulator.wait_inbox(installed.conversation_id, 1)
        assert (entry["kind"], entry.get("files") or []) == ("text", [])
        asked = OutgoingFile("plan.pdf", "application/pdf", b"pdf")
        with pytest.raises(PacerelleError):
            await agent.send_text("with the plan", source_message_id=message_id, files=[asked])
        assert [reply.text for reply in agent.history().replies] == ["the text"]


async def test_a_text_over_the_limit_is_refused_before_anything_is_recorded(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        saves = len(recorder.documents)
        with pytest.raises(SendError) as caught:
            await agent.send_text("x" * (MAX_SEND_TEXT_CHARS + 1))
        assert caught.value.reason == "too_long"
        assert agent.history().replies == ()
        assert len(recorder.documents) == saves
        assert await emulator.inbox(installed.conversation_id) == []
