"""Agent refusals and fallbacks: a second start is a no-op, an over-long note is refused
with the request still pending, and a renewal whose token request fails keeps serving on
the old connection until the relay ends it, then comes back."""

import logging

import pytest

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.limits import MAX_NOTE_CHARS
from custom_components.pacerelle.client.outbox.sender import SendError
from tests.emulator import EmulatorConfig
from tests.helpers.client_agent import Recorder, connected_agent, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle, running_emulator


async def test_a_second_start_keeps_the_running_tasks(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    agent = make_agent(emulator, installed, Recorder())
    agent.start()
    try:
        tasks = list(agent._tasks)
        agent.start()
        assert agent._tasks == tasks
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
    finally:
        await agent.stop()
    assert agent.status.state is ConnectionState.STOPPED


async def test_an_over_long_note_is_refused_and_the_request_stays_pending(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        message_id = await emulator.send(installed.conversation_id, text="lights?")
        await wait_for(lambda: len(recorder.delivered) == 1)
        saves = len(recorder.documents)
        with pytest.raises(SendError) as caught:
            await agent.mark_processed(message_id, "x" * (MAX_NOTE_CHARS + 1))
        assert caught.value.reason == "note_too_long"
        assert [r.message_id for r in agent.pending_requests()] == [message_id]
        assert len(recorder.documents) == saves


async def test_a_failed_renewal_keeps_serving_until_expiry_then_reconnects(
    socket_enabled: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="custom_components.pacerelle.client.agent.connection")
    async with running_emulator(EmulatorConfig(runtime_token_ttl=1.0)) as emulator:
        installed = await emulator.install()
        recorder = Recorder()
        async with connected_agent(emulator, installed, recorder) as agent:
            await emulator.faults(runtime_token_status=503)
            await wait_for(lambda: "Could not renew the runtime token yet" in caplog.text)
            await emulator.faults(reset=True)
            message_id = await emulator.send(installed.conversation_id, text="after renewal")
            await wait_for(lambda: [r.message_id for r in recorder.delivered] == [message_id])
            await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
