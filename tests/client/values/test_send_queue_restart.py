"""Queued sends survive a restart: out once, in order; one caught mid-write is uncertain.

HA-free agents on the running emulator; a "restart" is a second agent built from a store
document the first one saved (what a new process would load).
"""

import asyncio
from typing import Any

from custom_components.pacerelle.client.agent.agent import Agent
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.history import UNCERTAIN
from tests.helpers.client_agent import Recorder, connected_agent, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle, Installed

MARKER_TRIES = 3
MARKER_WAIT = 5.0  # past the confirmation window: a marker not there by then was lost


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


async def test_a_connection_lost_while_the_queue_is_written_loses_and_doubles_nothing(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    async with connected_agent(emulator, installed, Recorder()) as agent:
        await spoken(emulator, installed, agent)
        await offline(emulator, agent)
        ids = [(await agent.send_text(f"Reading {n}")).message_id for n in range(60)]
        await emulator.faults(reset=True)
        # Cut the link as soon as the agent is back: somewhere in the middle of the batch.
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        await emulator.faults(drop_connections="abort")
        await wait_for(lambda: len(agent.data.queued) == 0, within=20)
        # A marker written after anything still queued; one written on the dying link
        # is itself uncertain, so the next goes on the new one.
        for _ in range(MARKER_TRIES):
            await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
            marker = await agent.send_text("Done")
            try:
                inbox = await delivered_up_to(
                    emulator, installed.conversation_id, marker.message_id
                )
                break
            except TimeoutError:
                continue
    delivered = [m["message_id"] for m in inbox if m["text"] != "Done"]
    uncertain = {s.message_id for s in agent.data.uncertain}
    assert len(delivered) == len(set(delivered)), "a message arrived twice"
    assert delivered == [i for i in ids if i in set(delivered)], "out of order"
    # Each one arrived, or is reported uncertain (written as the link died): none vanished.
    assert set(ids) <= set(delivered) | uncertain


async def delivered_up_to(
    emulator: EmulatorHandle, conversation_id: str, message_id: str
) -> list[dict[str, Any]]:
    """The person's inbox once `message_id` is in it."""
    async with asyncio.timeout(MARKER_WAIT):
        while True:
            inbox = await emulator.inbox(conversation_id)
            if any(m["message_id"] == message_id for m in inbox):
                return inbox
            await asyncio.sleep(0.02)
