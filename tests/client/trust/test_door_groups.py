"""Trust of group messages, attacked through the emulator (a real relay over TCP).

A group message is judged by the Signal session that delivered its sender key (trust.py):
the relay can neither relabel one member's message as another's, nor make a key it
delivered over a session of its own trusted; a member's second device is trusted once the
device that delivered the member's key is.
"""

import base64
import json
import os
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.repairs import issue_id
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.relay_forgeries import relay_delivers_own_key
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, refused, trust

ANA, BEN = "usr_ana", "usr_ben"


def relay_replays_as(
    emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch, *, who: str, as_: str
) -> None:
    """The relay delivers each group message of `who` twice: as is, then as `as_`'s."""
    hub = emulator.emulator.hub
    enqueue = hub.enqueue

    async def hostile(agent_id: str, envelope: dict[str, Any]) -> None:
        await enqueue(agent_id, envelope)
        if envelope.get("from") == who and str(envelope.get("to")).startswith("group:"):
            await enqueue(agent_id, {**envelope, "id": f"relabelled-{envelope['id']}", "from": as_})

    monkeypatch.setattr(hub, "enqueue", hostile)


async def test_a_members_message_relabelled_as_another_members_is_not_fired(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    relay_replays_as(emulator, monkeypatch, who=ANA, as_=BEN)

    ana = await member_writes(emulator, agent, group_id, text="unlock the door", user_id=ANA)
    assert ana["sender_id"] == ANA
    # Ben's own message comes after the relabelled copy: its event means the copy was handled.
    ben = await member_writes(emulator, agent, group_id, text="hello", user_id=BEN)
    assert ben["text"] == "hello"
    fired = [(e.data["sender_id"], e.data["text"]) for e in agent.events]
    assert fired == [(ANA, "unlock the door"), (BEN, "hello")]
    await wait_until(
        lambda: any(
            e["kind"] == "acknowledged" and str(e.get("message_id", "")).startswith("relabelled-")
            for e in emulator.emulator.events
        )
    )


async def test_a_members_second_device_is_trusted_once_the_member_key_is(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)

    before = await member_writes(emulator, agent, group_id, text="hi", user_id=ANA, device_id="2")
    assert (before["sender_device_id"], before["trusted"], before["trust_state"]) == (
        "2",
        False,
        "unverified",
    )
    # The repair asks about the device whose session delivered Ana's sender key (her first),
    # with the code her first device shows.
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id(agent.entry.entry_id, ANA, "1"))
    assert issue is not None
    shown = emulator.emulator.humans.device(ANA, "1").describe()["verification_code"]
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["code"] == shown

    decided = await trust(hass, emulator, ANA, "1")
    assert decided["verification_code"] == shown
    after = await member_writes(emulator, agent, group_id, text="hi", user_id=ANA, device_id="2")
    assert (after["sender_device_id"], after["trusted"], after["trust_state"]) == (
        "2",
        True,
        "trusted",
    )


async def test_a_key_delivered_over_an_unverified_session_is_not_trusted(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    await trust(hass, emulator, ANA, "1")
    trusted = await member_writes(emulator, agent, group_id, text="hi", user_id=ANA)
    assert trusted["trusted"] is True

    # A device the relay made up for Ana delivers a new key; the message sealed with it
    # claims Ana's trusted first device.
    group = emulator.emulator.state.groups[group_id]
    relay_delivers_own_key(emulator, agent, group, ANA, "9")
    forged = await member_writes(
        emulator, agent, group_id, text="unlock the door", user_id=ANA, device_id="1"
    )
    assert (forged["sender_id"], forged["sender_device_id"]) == (ANA, "1")
    assert (forged["trusted"], forged["trust_state"]) == (False, "unverified")


async def test_blocking_the_device_that_delivered_a_members_key_drops_all_their_messages(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    await member_writes(emulator, agent, group_id, text="hi", user_id=ANA, device_id="2")
    await call(hass, "block_device", {"person_id": ANA, "sender_device_id": "1"})

    # Whichever device the relay names, Ana's messages are sealed with the blocked one's key.
    before = len(agent.events)
    for device_id in ("2", "3"):
        await emulator.admin(
            "POST",
            f"/conversations/{group_id}/send",
            {"text": "unlock the door", "user_id": ANA, "device_id": device_id},
        )
    await member_writes(emulator, agent, group_id, text="hello", user_id=BEN)
    assert [e.data["sender_id"] for e in agent.events[before:]] == [BEN]


async def test_a_member_whose_app_was_reinstalled_is_changed_not_lost(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    owner = agent.installed.owner_id
    first = await member_writes(emulator, agent, group_id, text="hi", user_id=owner)
    assert first["trusted"] is True  # the owner's first device, trusted on first use

    # A new identity for the owner's first device; the next epoch's key comes from it.
    await emulator.admin("POST", f"/conversations/{agent.conversation_id}/devices/1/reset")
    emulator.emulator.humans.device(owner, "1")
    await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": [BEN]})
    after = await member_writes(emulator, agent, group_id, text="hi again", user_id=owner)
    assert (after["trusted"], after["trust_state"]) == (False, "changed")


def test_the_key_and_request_keep_who_delivered_the_key_across_a_restart() -> None:
    key = GroupKey("c-group", "k-1", 2, bytes(32), ANA, "1", b"\x05" + bytes(32))
    assert GroupKey.from_json(key.to_json()) == key
    request = Request(
        "m-1",
        "c-group",
        ANA,
        "2",
        "group:c-group",
        True,
        "text",
        "hi",
        None,
        1.0,
        group_key=key.name,
    )
    assert Request.from_json(request.to_json()) == request
    # A request stored before the field existed is judged without a key (unverified).
    older = {name: value for name, value in request.to_json().items() if name != "group_key"}
    assert Request.from_json(older).group_key is None


def relay_adds_a_member_key(emulator: EmulatorHandle, agent: Agent, group_id: str) -> str:
    """The relay makes up a person in the group and delivers, over its own new session, a
    key of the highest epoch, which no member holds; its key id."""
    emu = emulator.emulator
    key_id, epoch = "gk-relay", 99
    plaintext = json.dumps(
        {
            "type": "pacerelle.group.sender_key",
            "v": 1,
            "alg": "AES-256-GCM",
            "conversation_id": group_id,
            "key_id": key_id,
            "epoch": epoch,
            "raw_key_b64": base64.b64encode(os.urandom(32)).decode(),
        }
    ).encode()
    device = emu.humans.device("usr_relay", "1")
    sealed = device.encrypt_for(emu, agent.installed.agent_id, plaintext, group_id)
    emu.state.group_keys.append(
        {
            "conversation_id": group_id,
            "key_id": key_id,
            "epoch": epoch,
            "sender_id": "usr_relay",
            "sender_device_id": "1",
            "envelope_b64": base64.b64encode(sealed).decode(),
            "agent_id": agent.installed.agent_id,
        }
    )
    return key_id


async def test_the_agent_never_seals_with_a_key_the_relay_delivered(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    owner = agent.installed.owner_id
    await member_writes(emulator, agent, group_id, text="hi", user_id=owner)
    asked = await member_writes(emulator, agent, group_id, text="lights?", user_id=ANA)
    relay_key = relay_adds_a_member_key(emulator, agent, group_id)

    await call(hass, "send_message", {"text": "Off", "source_message_id": asked["message_id"]})
    await call(
        hass,
        "send_message",
        {"text": "Dinner", "conversation_id": group_id, "to": f"group:{group_id}"},
    )
    entries = await emulator.wait_inbox(group_id, 2 * len(members) * 2)
    assert {e.get("key_id") for e in entries}.isdisjoint({relay_key, None}), entries
    assert sorted(e["text"] for e in entries) == ["Dinner"] * 6 + ["Off"] * 6


async def test_a_group_without_a_trusted_member_gets_only_replies(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, groups={"Neighbours": [ANA, BEN]})
    group_id = agent.groups["Neighbours"]
    asked = await member_writes(emulator, agent, group_id, text="parcel?", user_id=BEN)
    assert asked["trusted"] is False

    # Nobody trusted: nothing that answers no message (as for a person's unverified phone).
    group = {"text": "Hello", "conversation_id": group_id, "to": f"group:{group_id}"}
    await refused(hass, "send_message", group, "no_trusted_device")
    # A reply is sealed with the asker's own key, as a direct answer goes to the asking phone.
    await call(hass, "send_message", {"text": "Yes", "source_message_id": asked["message_id"]})
    entries = await emulator.wait_inbox(group_id, 2)
    assert {(e["user_id"], e["text"]) for e in entries} == {(ANA, "Yes"), (BEN, "Yes")}
