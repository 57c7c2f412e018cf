"""The HA-free agent against the running emulator: connect, receive, reply, reconnect."""

import pytest

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.errors import PacerelleConnectionError
from custom_components.pacerelle.client.outbox.sender import SendError
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.client_agent import Recorder, connected_agent, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle


async def test_encrypted_request_and_reply(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
        assert status["bundle_published"] is True
        assert status["protocol_features"] == ["history-v1"]
        message_id = await emulator.send(installed.conversation_id, text="Lights on")
        await wait_for(lambda: len(recorder.delivered) == 1)
        request = recorder.delivered[0]
        assert (request.message_id, request.text, request.sender_device_id) == (
            message_id,
            "Lights on",
            "1",
        )
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [])
        assert agent.status.pending == 1
        reply = await agent.send_text("Done", source_message_id=message_id)
        inbox = await emulator.wait_inbox(installed.conversation_id, 1)
        assert inbox[0]["message_id"] == reply.message_id
        assert inbox[0]["text"] == "Done"
        assert inbox[0]["history"] == "valid"
        assert inbox[0]["reply_to_message_id"] == message_id
        await agent.mark_processed(message_id, note="ok")
        assert agent.status.pending == 0
        saved = AgentData.from_document(recorder.last_document)
        assert saved is not None
        assert saved.history.requests[-1].note == "ok"
        assert saved.history.replies[-1].text == "Done"
    assert agent.status.state is ConnectionState.STOPPED


async def test_checkpoints_are_saved_and_listed(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False) as agent:
        message_id = await emulator.send(installed.conversation_id, text="plan", encrypted=False)
        await wait_for(lambda: len(recorder.delivered) == 1)
        await agent.save_checkpoint(message_id, "looked at the lights", "turn them off")
        await agent.save_checkpoint("other", "done", "nothing", status="completed")
        assert [c.source_message_id for c in agent.checkpoints()] == [message_id]
        assert len(agent.checkpoints(include_completed=True)) == 2
        assert agent.checkpoints()[0].conversation_id == installed.conversation_id
        with pytest.raises(ValueError, match="status"):
            await agent.save_checkpoint(message_id, "x", "y", status="paused")
        saved = AgentData.from_document(recorder.last_document)
        assert saved is not None
        assert saved.checkpoints == agent.data.checkpoints
        history = agent.history(installed.conversation_id, limit=1)
        assert [item.request.message_id for item in history.requests] == [message_id]


async def test_sends_refused_before_the_user_speaks_and_when_offline(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    agent = make_agent(emulator, installed, recorder)
    with pytest.raises(PacerelleConnectionError):
        await agent.send_text("nobody listens", expire_after=0)
    agent.start()
    try:
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        with pytest.raises(SendError) as caught:
            await agent.send_text("hello first")  # to the owner's conversation by default
        assert caught.value.reason == "no_session"
        with pytest.raises(SendError) as unknown:
            await agent.send_text("x", source_message_id="no-such-request")
        assert unknown.value.reason == "unknown_request"
        assert agent.data.history.replies == ()  # nothing recorded as sent
    finally:
        await agent.stop()
