"""A relay replaying a group message under a new id: refused, never run again.

A group message is sealed with the member's static group key (no ratchet, no counter), so
unlike a Signal message it would decrypt again and again. The relay keeps every frame it
routed: resent with a fresh message id (and any `from_device_id`), "turn on the kitchen
light" from a trusted member would be a new command. client/values/requests.py remembers the seals
(key and IV) of the group messages it took and refuses a second one.
"""

import base64
import json
import os
import uuid

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import MAX_SEALS_PER_KEY
from custom_components.pacerelle.client.values.groups import GroupKey, seal_message
from custom_components.pacerelle.client.values.requests import GroupSeal, Inbox
from tests.helpers.agent import Agent, start_agent
from tests.helpers.assist import KITCHEN, light_state
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ASSIST_IN_GROUPS, DEVICES, family_group, member_writes
from tests.helpers.relay_forgeries import relayed_frames
from tests.helpers.runtime import wait_until

BEN = "usr_ben"
GHOST = "usr_ghost"


@pytest.mark.usefixtures("kitchen_light")
async def test_a_replayed_group_command_under_a_new_id_is_not_run_again(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await start_agent(hass, emulator, options=ASSIST_IN_GROUPS)
    group_id, members = await family_group(emulator, agent)
    everyone = len(members) * len(DEVICES)
    frames = relayed_frames(emulator, monkeypatch)
    # The owner's first device is trusted on first use: the command runs.
    asked = await member_writes(
        emulator, agent, group_id, text="turn on the kitchen light", user_id=members[0]
    )
    assert asked["trusted"] is True
    await emulator.wait_inbox(group_id, everyone)
    assert light_state(hass) == "on"
    await hass.services.async_call("light", "turn_off", {"entity_id": KITCHEN}, blocking=True)

    original = next(frame for frame in frames if frame["id"] == asked["message_id"])
    replays = [
        {**original, "id": str(uuid.uuid4()), "from_device_id": device} for device in DEVICES
    ]
    injected = await emulator.faults(inject_frames=[json.dumps(frame) for frame in replays])
    assert injected["injected"] == len(replays)
    # Ben (unverified) writes next: the bridge answers in order, so once he is told, any
    # replay taken before him would have been run.
    ben = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": "hello", "user_id": BEN}
    )
    await emulator.wait_inbox(group_id, 2 * everyone)
    told = await emulator.inbox(group_id)
    ids = [event.data["message_id"] for event in agent.events]
    assert {e["reply_to_message_id"] for e in told[everyone:]} == {ben["message_id"]}, ids
    assert not {frame["id"] for frame in replays} & set(ids), ids
    assert light_state(hass) == "off"
    # The command was answered and processed; only Ben's refused one waits.
    await wait_until(
        lambda: [r.message_id for r in agent.runtime.agent.pending_requests()]
        == [ben["message_id"]]
    )


FLOOD = 2100


def invented_member(emulator: EmulatorHandle, agent: Agent, group_id: str) -> GroupKey:
    """The relay makes up a member: a session of its own, a key of the group's epoch."""
    emu = emulator.emulator
    epoch = emu.state.groups[group_id].epoch
    key = GroupKey(group_id, "gk-ghost", epoch, os.urandom(32))
    framed = emu.humans.device(GHOST, "1").encrypt_for(
        emu, agent.installed.agent_id, json.dumps(key.to_json()).encode(), group_id
    )
    emu.state.group_keys.append(
        {
            "conversation_id": group_id,
            "key_id": key.key_id,
            "epoch": epoch,
            "sender_id": GHOST,
            "sender_device_id": "1",
            "envelope_b64": base64.b64encode(framed).decode(),
            "agent_id": agent.installed.agent_id,
        }
    )
    return key


@pytest.mark.usefixtures("kitchen_light")
async def test_a_flood_of_another_senders_messages_does_not_flush_the_replay_refusal(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member the relay made up sends 2,100 group messages; then the relay replays the
    owner's "turn on the kitchen light" under a new id: refused (the owner's key still
    holds its seal: seals are kept per key, inbox.py)."""
    agent = await start_agent(hass, emulator, options=ASSIST_IN_GROUPS)
    group_id, members = await family_group(emulator, agent)
    frames = relayed_frames(emulator, monkeypatch)
    asked = await member_writes(
        emulator, agent, group_id, text="turn on the kitchen light", user_id=members[0]
    )
    assert asked["trusted"] is True
    await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert light_state(hass) == "on"
    await hass.services.async_call("light", "turn_off", {"entity_id": KITCHEN}, blocking=True)

    ghost = invented_member(emulator, agent, group_id)
    hub = emulator.emulator.hub
    flood = [str(uuid.uuid4()) for _ in range(FLOOD)]
    for message_id in flood:
        await hub.enqueue(  # blank: fires its event, asks Assist nothing
            agent.installed.agent_id,
            {
                "type": "MSG",
                "id": message_id,
                "conversation_id": group_id,
                "from": GHOST,
                "from_device_id": "1",
                "to": f"group:{group_id}",
                "payload_b64": base64.b64encode(seal_message(ghost, " ")).decode(),
                "encrypted": True,
            },
        )
    await wait_until(lambda: flood[-1] in {e.data["message_id"] for e in agent.events}, 120)
    assert len({e.data["message_id"] for e in agent.events} & set(flood)) == FLOOD

    original = next(frame for frame in frames if frame["id"] == asked["message_id"])
    replay = {**original, "id": str(uuid.uuid4())}
    await emulator.faults(inject_frames=[json.dumps(replay)])
    # Ben (unverified) writes next: the bridge answers in order, so once he is told, the
    # replay, had it been taken, would have been run.
    told = len(await emulator.inbox(group_id))
    ben = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": "hello", "user_id": BEN}
    )
    entries = await emulator.wait_inbox(group_id, told + len(members) * len(DEVICES), 30)
    assert {e["reply_to_message_id"] for e in entries[told:]} == {ben["message_id"]}
    assert replay["id"] not in {e.data["message_id"] for e in agent.events}
    assert light_state(hass) == "off"


def test_seals_survive_a_restart_are_bounded_per_key_and_old_stores_load() -> None:
    mine, theirs = "c1:k-ana:1", "c1:k-ghost:1"
    inbox = Inbox().with_group_seal(GroupSeal(mine, _iv(0)))
    for number in range(1, MAX_SEALS_PER_KEY + 5):
        inbox = inbox.with_group_seal(GroupSeal(theirs, _iv(number)))
    # Another key's flood ages out only its own seals (the oldest first).
    assert len(inbox.group_seals[theirs]) == MAX_SEALS_PER_KEY
    assert not inbox.has_group_seal(GroupSeal(theirs, _iv(4)))
    assert inbox.has_group_seal(GroupSeal(theirs, _iv(5)))
    assert inbox.has_group_seal(GroupSeal(mine, _iv(0)))
    assert not inbox.has_group_seal(GroupSeal(mine, _iv(1)))
    assert Inbox.from_json(inbox.to_json()).group_seals == inbox.group_seals
    # They go with their key.
    assert inbox.with_seals_of([mine]).group_seals.keys() == {mine}
    # Written before seals were kept at all.
    written_before = {
        k: v for k, v in Inbox().to_json().items() if k not in ("group_seals", "legacy_group_seals")
    }
    assert Inbox.from_json(written_before).group_seals == {}


def test_a_store_with_the_global_seal_list_still_refuses_what_it_holds() -> None:
    """Stores from before kept one list of digests: loaded as legacy seals, still refused,
    kept across saves, never grown."""
    old, new = GroupSeal("c1:k-ana:1", _iv(1)), GroupSeal("c1:k-ana:1", _iv(2))
    written_before = {**Inbox().to_json(), "group_seals": [old.digest]}
    del written_before["legacy_group_seals"]
    loaded = Inbox.from_json(written_before)
    assert loaded.group_seals == {}
    assert loaded.has_group_seal(old)
    assert not loaded.has_group_seal(new)
    saved = Inbox.from_json(loaded.with_group_seal(new).to_json())
    assert saved.has_group_seal(old)
    assert saved.has_group_seal(new)
    assert saved.legacy_seals == {old.digest}


def _iv(number: int) -> str:
    return base64.b64encode(number.to_bytes(12, "big")).decode()
