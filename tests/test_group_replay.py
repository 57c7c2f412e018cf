"""A relay replaying a group message under a new id: refused, never run again.

A group message is sealed with the member's static group key (no ratchet, no counter), so
unlike a Signal message it would decrypt again and again. The relay keeps every frame it
routed: resent with a fresh message id (and any `from_device_id`), "turn on the kitchen
light" from a trusted member would be a new command. client/inbox.py remembers the seals
(key and IV) of the group messages it took and refuses a second one.
"""

import json
import uuid
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.inbox import MAX_GROUP_SEALS, Inbox
from tests.emulator_fixtures import EmulatorHandle
from tests.runtime_harness import wait_until
from tests.services_harness import start_agent
from tests.test_assist_bridge import KITCHEN, kitchen_light  # noqa: F401 - a fixture
from tests.test_assist_groups import OPTIONS, light_state
from tests.test_group_conversations import DEVICES, family_group, member_writes

BEN = "usr_ben"


def relayed_frames(emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every frame the relay routes to an agent, as a hostile relay would keep them."""
    hub = emulator.emulator.hub
    kept: list[Any] = []
    enqueue = hub.enqueue

    async def keeping(agent_id: str, envelope: Any) -> None:
        kept.append(dict(envelope))
        await enqueue(agent_id, envelope)

    monkeypatch.setattr(hub, "enqueue", keeping)
    return kept


@pytest.mark.usefixtures("kitchen_light")
async def test_a_replayed_group_command_under_a_new_id_is_not_run_again(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await start_agent(hass, emulator, options=OPTIONS)
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


def test_seals_survive_a_restart_are_bounded_and_old_stores_load() -> None:
    inbox = Inbox()
    for number in range(MAX_GROUP_SEALS + 5):
        inbox = inbox.with_group_seal(f"{number:032x}")
    assert len(inbox.group_seals) == MAX_GROUP_SEALS
    assert f"{4:032x}" not in inbox.group_seals  # the oldest go first
    assert Inbox.from_json(inbox.to_json()).group_seals == inbox.group_seals
    written_before = {k: v for k, v in Inbox().to_json().items() if k != "group_seals"}
    assert Inbox.from_json(written_before).group_seals == {}
