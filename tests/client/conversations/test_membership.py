"""Whether the agent is still in a group (client/conversations/membership.py), asked of a
relay that refuses as it likes: only a refusal as to a non-member (403 to a token just
issued) makes a group left; token trouble, server errors and garbage change nothing; the
keys handed out again bring it back; however many groups are asked about, the relay is
asked, and the answer kept, for MAX_KEYED_GROUPS at most; an answer held back is given up
within CHECK_SECONDS and changes nothing."""

import asyncio

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.conversations import membership
from custom_components.pacerelle.client.limits import MAX_KEYED_GROUPS
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group
from tests.helpers.hostile_relay import Hostility

pytest_plugins = ["tests.helpers.hostile_relay_fixtures"]


async def test_only_a_refusal_as_to_a_non_member_makes_a_group_left(
    hass: HomeAssistant, hostile_emulator: EmulatorHandle, hostility: Hostility
) -> None:
    agent = await start_agent(hass, hostile_emulator)
    group_id, _ = await family_group(hostile_emulator, agent)
    client = agent.runtime.agent
    for status in (401, 404, 500, 502):
        hostility.group_keys_status = status
        await client.check_groups([group_id])
        assert not client.has_left(group_id), status
    hostility.group_keys_status = None
    hostility.group_keys_answer = lambda _conversation_id: [{"not": "an envelope"}] * 3
    await client.check_groups([group_id])  # an answer at all: the relay routes it to us
    assert not client.has_left(group_id)

    hostility.group_keys_answer = None
    hostility.group_keys_status = 403
    await client.check_groups([group_id])
    assert client.has_left(group_id)
    # Token trouble now does not bring it back either; the keys handed out do.
    hostility.group_keys_status = 401
    await client.check_groups([group_id])
    assert client.has_left(group_id)
    hostility.group_keys_status = None
    await client.check_groups([group_id])
    assert not client.has_left(group_id)


async def test_however_many_groups_are_asked_about_the_answers_stay_bounded(
    hass: HomeAssistant, hostile_emulator: EmulatorHandle, hostility: Hostility
) -> None:
    agent = await start_agent(hass, hostile_emulator)
    client = agent.runtime.agent
    hostility.group_keys_status = 403
    asked = [f"conv_{index}" for index in range(MAX_KEYED_GROUPS + 36)]
    before = hostility.group_keys_requests
    await client.check_groups([*asked, *asked])
    # A refused request is retried once with a new token (relay/api.py).
    assert hostility.group_keys_requests - before == 2 * MAX_KEYED_GROUPS
    assert [cid for cid in asked if client.has_left(cid)] == asked[:MAX_KEYED_GROUPS]
    # Asked about others later: the oldest answers go, never more than the bound is kept.
    await client.check_groups(asked[MAX_KEYED_GROUPS:])
    left = [cid for cid in asked if client.has_left(cid)]
    assert len(left) == MAX_KEYED_GROUPS
    assert left[-36:] == asked[MAX_KEYED_GROUPS:]


async def test_an_answer_held_back_is_given_up_and_changes_nothing(
    hass: HomeAssistant,
    hostile_emulator: EmulatorHandle,
    hostility: Hostility,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(membership, "CHECK_SECONDS", 0.5)
    agent = await start_agent(hass, hostile_emulator)
    group_id, _ = await family_group(hostile_emulator, agent)
    client = agent.runtime.agent
    hostility.group_keys_status = 403
    await client.check_groups([group_id])
    assert client.has_left(group_id)
    hostility.group_keys_status = None
    gate = hostility.group_keys_gate = asyncio.Event()
    try:
        async with asyncio.timeout(5):
            await client.check_groups([group_id, "conv_other"])
        assert client.has_left(group_id)
    finally:
        gate.set()
    hostility.group_keys_gate = None
    await client.check_groups([group_id])
    assert not client.has_left(group_id)
