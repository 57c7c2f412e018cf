"""The group keys an incoming message needs are fetched before the agent's lock
(client/conversations/group_key_fetch.py): a relay that holds its answer back holds up no
send, and what it lists for another group, or learned meanwhile, changes nothing.

A relay listing far too many envelopes in one answer is refused whole, none opened:
tests/client/conversations/test_group_key_bounds.py::test_a_relay_listing_thousands_of_envelopes_in_one_answer_is_refused_unopened.
"""

import asyncio
import os
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.conversations import group_key_fetch
from custom_components.pacerelle.client.limits import MAX_KEYED_GROUPS
from custom_components.pacerelle.client.relay.frames import InboundMessage, group_recipient
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.helpers.agent import OWNER, Agent, add_group, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group
from tests.helpers.hostile_relay import Hostility
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, event_of, human_writes

pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]

ANA = "usr_ana"
SEND_WITHIN = 10.0  # a send takes well under a second here; the fetch is held for good


async def _family(hass: HomeAssistant, emulator: EmulatorHandle) -> tuple[Agent, str]:
    """An agent in the family group; the owner has written to it (trusted on first use)."""
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    await human_writes(emulator, agent, text="Hello")
    return agent, group_id


async def _ana_writes(emulator: EmulatorHandle, group_id: str, text: str) -> str:
    sent = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": text, "user_id": ANA}
    )
    return str(sent["message_id"])


def _fired(agent: Agent, message_id: str) -> int:
    return sum(1 for e in agent.events if e.data["message_id"] == message_id)


async def test_a_send_completes_while_the_relay_holds_back_a_groups_keys(
    hass: HomeAssistant, hostile_emulator: EmulatorHandle, hostility: Hostility
) -> None:
    """Ana's group message needs her key; the relay does not answer the fetch. Meanwhile a
    `send_message` to the owner's own conversation completes and reaches his phone; once
    the relay answers, Ana's message is handed over."""
    agent, group_id = await _family(hass, hostile_emulator)
    gate = hostility.group_keys_gate = asyncio.Event()
    try:
        waiting = await _ana_writes(hostile_emulator, group_id, "in the group")
        await wait_until(lambda: hostility.group_keys_requests == 1)
        async with asyncio.timeout(SEND_WITHIN):
            await call(hass, "send_message", {"text": "meanwhile"})
        entries = await hostile_emulator.wait_inbox(agent.conversation_id, 1)
        assert [e["text"] for e in entries] == ["meanwhile"]
        assert not gate.is_set()
        assert _fired(agent, waiting) == 0
    finally:
        gate.set()
    assert (await event_of(agent, waiting))["text"] == "in the group"


async def test_keys_the_agent_learned_while_its_fetch_was_held_are_not_learned_again(
    hass: HomeAssistant, hostile_emulator: EmulatorHandle, hostility: Hostility
) -> None:
    """While the incoming message's fetch is held, the agent sends to the group (its own
    fetch passes) and learns the group's keys. The held answer, the same keys, then comes:
    nothing is learned twice, the group's epoch stays, Ana's message fires once."""
    agent, group_id = await _family(hass, hostile_emulator)
    gate = hostility.group_keys_gate = asyncio.Event()
    try:
        waiting = await _ana_writes(hostile_emulator, group_id, "held")
        await wait_until(lambda: hostility.group_keys_requests == 1)
        hostility.group_keys_gate = None  # later fetches (the send's) are answered at once
        to_group = {"conversation_id": group_id, "to": f"group:{group_id}"}
        async with asyncio.timeout(SEND_WITHIN):
            await call(hass, "send_message", {"text": "from the agent", **to_group})
        conversations = agent.runtime.agent.data.conversations
        learned, epoch = dict(conversations.group_keys), conversations.group_epoch(group_id)
        assert learned
        assert epoch is not None
        assert _fired(agent, waiting) == 0
    finally:
        gate.set()
    await event_of(agent, waiting)
    await human_writes(hostile_emulator, agent, text="after")  # the batch is behind us
    conversations = agent.runtime.agent.data.conversations
    assert conversations.group_keys.keys() == learned.keys()
    assert conversations.group_epoch(group_id) == epoch
    assert _fired(agent, waiting) == 1


async def test_envelopes_listed_for_another_group_change_nothing(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Asked for the family's keys, the relay lists the neighbours' (as they are, and
    relabelled as the family's): no key is learned, no session made, Ana's message waits
    (neither handed over nor refused); once the relay behaves, it is handed over."""
    agent, family = await _family(hass, hostile_emulator)
    other = await add_group(hostile_emulator, agent, "Neighbours", [OWNER, ANA])
    state = hostile_emulator.emulator.state

    def theirs(conversation_id: str) -> list[dict[str, Any]]:
        listed = [
            {k: v for k, v in item.items() if k != "agent_id"}
            for item in state.group_keys
            if item["conversation_id"] == other
        ]
        assert listed
        return [*listed, *({**item, "conversation_id": conversation_id} for item in listed)]

    hostility.group_keys_answer = theirs
    data = agent.runtime.agent.data
    sessions = set(data.signal.sessions)
    waiting = await _ana_writes(hostile_emulator, family, "family only")
    await wait_until(lambda: hostility.group_keys_requests == 1)
    await human_writes(hostile_emulator, agent, text="after")  # the batch is behind us
    assert "Ignoring a malformed group key envelope" in caplog.text  # labelled theirs
    assert "a group key does not match its envelope" in caplog.text  # relabelled ours
    data = agent.runtime.agent.data
    assert not data.conversations.group_keys
    assert not data.conversations.group_epochs
    assert set(data.signal.sessions) == sessions
    assert waiting not in data.inbox.rejected
    assert _fired(agent, waiting) == 0

    hostility.group_keys_answer = None
    second = await _ana_writes(hostile_emulator, family, "and now")
    await event_of(agent, second)
    ids = [e.data["message_id"] for e in agent.events]
    assert ids.index(waiting) < ids.index(second)  # in the order Ana wrote
    held = agent.runtime.agent.data.conversations.group_keys.values()
    assert {key.conversation_id for key in held} == {family}


async def test_a_fetch_the_relay_never_answers_is_given_up_and_the_inbox_goes_on(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past FETCH_SECONDS the held fetch is given up: the owner's next message is handed
    over, Ana's waits for her key, and comes first once the relay answers."""
    monkeypatch.setattr(group_key_fetch, "FETCH_SECONDS", 0.5)
    agent, group_id = await _family(hass, hostile_emulator)
    gate = hostility.group_keys_gate = asyncio.Event()
    try:
        waiting = await _ana_writes(hostile_emulator, group_id, "held for good")
        await wait_until(lambda: hostility.group_keys_requests == 1)
        await human_writes(hostile_emulator, agent, text="direct")
        assert "Could not fetch group keys of 1 groups within 0.5 s" in caplog.text
        assert _fired(agent, waiting) == 0
        hostility.group_keys_gate = None
        second = await _ana_writes(hostile_emulator, group_id, "answered")
        await event_of(agent, second)
    finally:
        gate.set()
    ids = [e.data["message_id"] for e in agent.events]
    assert ids.index(waiting) < ids.index(second)


def _group_message(index: int) -> InboundMessage:
    conversation_id = f"c-{index}"
    key = groups.GroupKey(conversation_id, "k-1", 1, os.urandom(32))
    return InboundMessage(
        f"m-{index}",
        conversation_id,
        "u-someone",
        "1",
        group_recipient(conversation_id),
        groups.seal_message(key, "hi"),
        True,
        None,
        (),
        f"d-{index}",
    )


def test_one_batch_fetches_the_keys_of_at_most_the_groups_the_store_keeps() -> None:
    """A batch (deferred messages ahead of it: up to 100) from more groups than the store
    keeps keys of fetches MAX_KEYED_GROUPS of them, one fetch each, in arrival order."""
    messages = [_group_message(index) for index in range(100)]
    data = AgentData(AgentSignalState.new())
    wanted = group_key_fetch.wanted_groups(data, [*messages, *messages])
    assert wanted == [f"c-{index}" for index in range(MAX_KEYED_GROUPS)]


async def test_an_envelope_whose_sender_id_is_not_an_id_is_ignored(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The relay lists the family's own envelopes with a sender id holding a line break (a
    forged log line, a second spelling of Ana): ignored as malformed by the relay-id rule,
    no key learned, no session made, Ana's message waits."""
    agent, family = await _family(hass, hostile_emulator)
    state = hostile_emulator.emulator.state

    def forged(conversation_id: str) -> list[dict[str, Any]]:
        listed = [
            {k: v for k, v in item.items() if k != "agent_id"}
            for item in state.group_keys
            if item["conversation_id"] == conversation_id
        ]
        assert listed
        return [{**item, "sender_id": f"{item['sender_id']}\nok"} for item in listed]

    hostility.group_keys_answer = forged
    sessions = set(agent.runtime.agent.data.signal.sessions)
    waiting = await _ana_writes(hostile_emulator, family, "family only")
    await wait_until(lambda: hostility.group_keys_requests == 1)
    await human_writes(hostile_emulator, agent, text="after")  # the batch is behind us
    assert "Ignoring a malformed group key envelope" in caplog.text
    data = agent.runtime.agent.data
    assert not data.conversations.group_keys
    assert set(data.signal.sessions) == sessions
    assert _fired(agent, waiting) == 0
