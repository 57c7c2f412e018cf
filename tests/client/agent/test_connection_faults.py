"""The agent through faults of the running emulator: expiry, drops, 5xx, redelivery, crashes."""

import asyncio

from custom_components.pacerelle.client.agent.connection import backoff_delay
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.requests import Request
from tests.emulator import EmulatorConfig
from tests.helpers.client_agent import ONE_FILE, Recorder, connected_agent, make_agent, wait_for
from tests.helpers.emulator import EmulatorHandle, running_emulator


def _connected_events(emulator: EmulatorHandle) -> list[dict[str, object]]:
    return [item for item in emulator.emulator.events if item["kind"] == "agent_connected"]


def test_backoff_grows_with_jitter_and_stops_at_the_cap() -> None:
    delays = [backoff_delay(attempt, 1.0, 30.0) for attempt in range(12)]
    assert 0.5 <= delays[0] <= 1.0
    assert 4.0 <= delays[3] <= 8.0
    assert all(15.0 <= delay <= 30.0 for delay in delays[5:])
    assert len({backoff_delay(4, 1.0, 30.0) for _ in range(20)}) > 1  # jitter


async def test_token_renewed_before_expiry_without_losing_messages(socket_enabled: None) -> None:
    # 2-second tokens, renewed at 80 % of their life: 0.4 s of margin before the relay
    # closes an expired one (1-second tokens left 0.2 s, which a loaded machine missed at
    # the first renewal: the relay's close then drops what was in flight).
    async with running_emulator(EmulatorConfig(runtime_token_ttl=2.0)) as emulator:
        installed = await emulator.install()
        recorder = Recorder()
        async with connected_agent(emulator, installed, recorder) as agent:
            sent = []
            replies = []
            for index in range(12):
                sent.append(await emulator.send(installed.conversation_id, text=f"m{index}"))
                await wait_for(lambda: len(recorder.delivered) == len(sent))
                # Sends made around a renewal wait for the new connection; none fails.
                for _ in range(5):
                    reply = await agent.send_text("ok", source_message_id=sent[-1])
                    replies.append(reply.message_id)
                    await asyncio.sleep(0.1)
            assert [r.message_id for r in recorder.delivered] == sent
            inbox = await emulator.wait_inbox(installed.conversation_id, len(replies))
            assert [entry["message_id"] for entry in inbox] == replies
            assert {entry["text"] for entry in inbox} == {"ok"}
            # Six seconds on 2-second tokens: renewed at 80 % of their life, each time
            # with a new connection, never refused by the gateway for an expired token.
            assert recorder.token_requests >= 3
            assert len(_connected_events(emulator)) >= 3
            refusals = [e for e in emulator.emulator.events if e["kind"] == "gateway_refused"]
            assert refusals == []


async def test_expired_token_closes_the_connection_and_the_agent_comes_back(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        await emulator.faults(expire_runtime_tokens=True)
        await wait_for(lambda: len(_connected_events(emulator)) == 2)
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        await emulator.send(installed.conversation_id, text="after expiry")
        await wait_for(lambda: len(recorder.delivered) == 1)
        assert recorder.token_requests == 2


async def test_dropped_connection_then_token_5xx_then_recovery(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    states: list[ConnectionState] = []
    async with connected_agent(emulator, installed, recorder) as agent:
        await emulator.faults(runtime_token_status=503)
        await emulator.faults(drop_connections="abort")
        await wait_for(lambda: agent.status.state is ConnectionState.RECONNECTING)
        before = recorder.token_requests
        await wait_for(lambda: recorder.token_requests >= before + 3)  # retried with backoff
        states.append(agent.status.state)
        # Sent while the agent is away: queued, delivered once it is back.
        message_id = await emulator.send(installed.conversation_id, text="while away")
        await emulator.faults(reset=True)
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
        await wait_for(lambda: len(recorder.delivered) == 1)
        assert recorder.delivered[0].message_id == message_id
        assert states == [ConnectionState.RECONNECTING]


async def test_interrupted_hand_over_is_redelivered_from_the_stored_copy(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    crashing = Recorder()

    def crash(_request: Request, _download: object) -> None:
        raise RuntimeError("Home Assistant stopped mid-way")

    crashing.prepare = crash  # type: ignore[method-assign]
    first = make_agent(emulator, installed, crashing)
    first.start()
    await wait_for(lambda: first.status.state is ConnectionState.CONNECTED)
    message_id = await emulator.send(
        installed.conversation_id, text="only once", attachments=ONE_FILE
    )
    await wait_for(lambda: any(doc["inbox"]["received"] for doc in crashing.documents))
    await first.stop()
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["queued"] == [message_id]  # not acknowledged

    # A new process from what was saved: the message comes again and is handed over from
    # the stored copy (decrypting it twice would fail: its message key is gone).
    saved = AgentData.from_document(crashing.last_document)
    assert saved is not None
    recorder = Recorder()
    second = make_agent(emulator, installed, recorder, data=saved)
    second.start()
    try:
        await wait_for(lambda: len(recorder.delivered) == 1)
        assert recorder.delivered[0].text == "only once"
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [])
        # A redelivery after acceptance is acknowledged again, never handed over twice.
        await emulator.faults(drop_connections=True)
        await wait_for(lambda: len(_connected_events(emulator)) == 3)
        await asyncio.sleep(0.2)
        assert len(recorder.delivered) == 1
    finally:
        await second.stop()


async def test_conflicting_redelivery_is_not_handed_over(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder, encrypted=False):
        frame = (
            '{"type":"MSG","id":"m-1","conversation_id":"%s","from":"%s","to":"%s",'
            '"payload_b64":"%s","encrypted":false}'
        )
        ids = (installed.conversation_id, installed.owner_id, installed.agent_id)
        await emulator.faults(inject_frames=[frame % (*ids, "aGk=")])
        await wait_for(lambda: len(recorder.delivered) == 1)
        await emulator.faults(inject_frames=[frame % (*ids, "aG8=")])  # same id, other text
        await emulator.faults(inject_frames=[frame % (*ids, "aGk=")])  # a true redelivery
        await asyncio.sleep(0.3)
        assert [r.text for r in recorder.delivered] == ["hi"]


async def test_unencrypted_messages_are_refused_when_encryption_is_on(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder):
        await emulator.send(installed.conversation_id, text="plain", encrypted=False)
        await emulator.send(installed.conversation_id, text="sealed")
        await wait_for(lambda: len(recorder.delivered) == 1)
        assert recorder.delivered[0].text == "sealed"
        # Refused for good: acknowledged so that the relay stops redelivering it.
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [])


async def test_gateway_refusal_is_retried_not_taken_for_revocation(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    agent = make_agent(emulator, installed, recorder)
    await emulator.faults(gateway_status=401)
    agent.start()
    try:
        await wait_for(lambda: recorder.token_requests >= 3)
        assert agent.status.state is ConnectionState.RECONNECTING
        assert recorder.revoked == 0
        await emulator.faults(reset=True)
        await wait_for(lambda: agent.status.state is ConnectionState.CONNECTED)
    finally:
        await agent.stop()


async def test_revocation_while_connected_stops_and_disconnects(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    async with connected_agent(emulator, installed, recorder) as agent:
        await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
        await wait_for(lambda: agent.status.state is ConnectionState.DISCONNECTED)
        assert recorder.revoked == 1
        requests = recorder.token_requests
        await asyncio.sleep(0.3)
        assert recorder.token_requests == requests  # stopped: no retry loop
    assert agent.status.state is ConnectionState.DISCONNECTED


async def test_an_event_fires_right_after_its_mark_and_once_its_copy_is_saved(
    emulator: EmulatorHandle,
) -> None:
    """At each event the request is saved as received (a kill then never decrypts it twice)
    and its mark was the last kept (a kill then never hands it over again); it is saved as
    accepted only after its event (a kill before its event never leaves it accepted)."""
    installed = await emulator.install()
    recorder = Recorder()
    seen: list[tuple[bool, bool, bool]] = []

    def deliver(request: Request) -> None:
        inbox = recorder.last_document["inbox"]
        received = {item["request"]["message_id"] for item in inbox["received"]}
        handed = set(recorder.last_document["handed_over"]["all"])
        seen.append(
            (
                request.message_id in received,
                request.message_id in inbox["accepted"],
                recorder.marks[-1][0] not in handed and len(recorder.marks) == len(seen) + 1,
            )
        )
        recorder.delivered.append(request)

    recorder.deliver = deliver  # type: ignore[method-assign]
    async with connected_agent(emulator, installed, recorder):
        for index in range(5):
            await emulator.send(installed.conversation_id, text=f"message {index}")
        await wait_for(lambda: len(recorder.delivered) == 5)
        await emulator.wait_agent(installed.agent_id, lambda status: not status["queued"])
    assert seen == [(True, False, True)] * 5
    inbox = recorder.last_document["inbox"]
    assert {r.message_id for r in recorder.delivered} <= set(inbox["accepted"])
    assert [mark for mark, _ in recorder.marks] == recorder.last_document["handed_over"]["all"]
