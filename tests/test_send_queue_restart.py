"""Queued sends survive a restart: out once, in order; one caught mid-write is uncertain.

HA-free agents on the running emulator; a "restart" is a second agent built from a store
document the first one saved (what a new process would load).
"""

import asyncio

from custom_components.pacerelle.client.agent import Agent
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.agent_data import AgentData
from custom_components.pacerelle.client.history import UNCERTAIN
from tests.client_agent_harness import Recorder, connected_agent, make_agent, wait_for
from tests.emulator_fixtures import EmulatorHandle, Installed


async def spoken(emulator: EmulatorHandle, installed: Installed, agent: Agent) -> None:
    """The person writes first, so the agent has a session to answer on."""
    await emulator.send(installed.conversation_id, text="hello")
    await wait_for(lambda: len(agent.pending_requests()) == 1)


async def offline(emulator: EmulatorHandle, agent: Agent) -> None:
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_for(lambda: agent.status.state is not ConnectionState.CONNECTED)


async def test_queued_sends_go_out_after_a_restart_once_in_order(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    first = Recorder()
    async with connected_agent(emulator, installed, first) as agent:
        await spoken(emulator, installed, agent)
        await offline(emulator, agent)
        ids = [(await agent.send_text(f"Leak {n}")).message_id for n in range(3)]
    # The process ends while offline (a clean stop or SIGKILL alike: the queue was saved
    # with each send, before the action returned).
    data = AgentData.from_document(first.last_document)
    assert data is not None
    assert [s.message_id for s in data.queued.sends] == ids

    await emulator.faults(reset=True)
    async with connected_agent(emulator, installed, Recorder(), data=data) as restarted:
        inbox = await emulator.wait_inbox(installed.conversation_id, 3)
        later = await restarted.send_text("After")
        inbox = await emulator.wait_inbox(installed.conversation_id, 4)
        assert [m["message_id"] for m in inbox] == [*ids, later.message_id]
        assert [m["text"] for m in inbox] == ["Leak 0", "Leak 1", "Leak 2", "After"]
        assert len(restarted.data.queued) == 0


async def test_a_send_caught_mid_write_by_a_crash_is_uncertain_never_resent(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    first = Recorder()
    async with connected_agent(emulator, installed, first) as agent:
        await spoken(emulator, installed, agent)
        await offline(emulator, agent)
        ids = [(await agent.send_text(f"Door {n}")).message_id for n in range(3)]
        await emulator.faults(reset=True)
        await emulator.wait_inbox(installed.conversation_id, 3)
        await wait_for(lambda: len(agent.data.queued) == 0)
    # The document saved just before the frames were written: a crash right there.
    marked = [
        doc
        for doc in first.documents
        if doc["queued_sends"] and all(s["attempted"] for s in doc["queued_sends"])
    ]
    assert marked, "the batch is marked before it is written"
    crashed = AgentData.from_document(marked[-1])
    assert crashed is not None

    recorder = Recorder()
    restarted = make_agent(emulator, installed, recorder, data=crashed)
    restarted.start()
    try:
        await wait_for(lambda: restarted.status.state is ConnectionState.CONNECTED)
        # A new send after the restart arrives right after the three: no second copy
        # (anything resent from the queue would be written before it).
        later = await restarted.send_text("Next")
        await emulator.wait_inbox(installed.conversation_id, 4)
        await asyncio.sleep(0.2)
        inbox = await emulator.inbox(installed.conversation_id)
        assert [m["message_id"] for m in inbox] == [*ids, later.message_id]
        assert len(restarted.data.queued) == 0
        assert [s.message_id for s in restarted.data.uncertain][-3:] == ids
        statuses = {r.message_id: r.status for r in restarted.data.history.replies}
        assert [statuses[i] for i in ids] == [UNCERTAIN] * 3
        assert restarted.status.uncertain_sends >= 3
    finally:
        await restarted.stop()
