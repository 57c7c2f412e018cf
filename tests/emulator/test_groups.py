"""Group conversations in the emulator, with the reference Signal peer as the agent.

The agent opens the members' sender key envelopes with the SDK's session names, reads a
member's group message with the key, and its group reply reaches every member's devices;
the relay's rules for groups (who writes, to whom) and key rotation are checked too.
"""

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.emulator import EmulatorConfig
from tests.emulator.groups import KEPT_EPOCHS, MAX_MEMBERS
from tests.emulator.reference_agent import ReferenceAgent
from tests.emulator.reference_groups import (
    fetch_key_envelopes,
    open_group_message,
    open_key_envelopes,
    seal_group_message,
)
from tests.emulator.sdk_echo import EchoAgent, load_sdk, sdk_installs, stop_echo
from tests.helpers.emulator import (
    AdminError,
    EmulatorHandle,
    Installed,
    running_emulator,
)

Json = dict[str, Any]


async def _online_group(
    emulator: EmulatorHandle, members: list[str]
) -> tuple[Installed, ReferenceAgent, str]:
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    await agent.connect()
    created = await emulator.admin(
        "POST",
        "/groups",
        {"name": "Family", "members": members, "agent_ids": [installed.agent_id]},
    )
    return installed, agent, str(created["conversation_id"])


async def test_member_message_and_agent_reply_through_the_sdk_flow(
    emulator: EmulatorHandle,
) -> None:
    installed, agent, group_id = await _online_group(emulator, ["usr_demo", "usr_ana"])
    await emulator.admin("POST", "/users/usr_ana/devices", {"device_id": "2"})
    sent = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": "Hi all", "user_id": "usr_ana"}
    )
    envelope = await agent.frame()
    assert (envelope["id"], envelope["from"], envelope["from_device_id"]) == (
        sent["message_id"],
        "usr_ana",
        "1",
    )
    assert envelope["to"] == f"group:{group_id}"
    keys = open_key_envelopes(agent, await fetch_key_envelopes(emulator, agent, group_id))
    assert len(keys) == 2  # one sender key per member
    assert open_group_message(keys, envelope) == "Hi all"
    await agent.ack(envelope)

    assert agent.ws is not None
    await agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m-reply",
            "conversation_id": group_id,
            "to": f"group:{group_id}",
            "payload_b64": seal_group_message(keys, group_id, "Hello family"),
            "encrypted": True,
            "reply_to_message_id": envelope["id"],
        }
    )
    entries = await emulator.wait_inbox(group_id, 3)
    assert sorted((e["user_id"], e["device_id"], e["text"]) for e in entries) == [
        ("usr_ana", "1", "Hello family"),
        ("usr_ana", "2", "Hello family"),
        ("usr_demo", "1", "Hello family"),
    ]
    only_ana_2 = await emulator.admin(
        "GET", f"/conversations/{group_id}/inbox?user_id=usr_ana&device_id=2"
    )
    assert [e["device_id"] for e in only_ana_2] == ["2"]
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["queued"] == []  # the ACK_READ to the member settled it
    # The chat page's view, as Ana on her first phone: what she sent, what it received.
    view = await emulator.admin(
        "GET", f"/conversations/{group_id}/timeline?user_id=usr_ana&device_id=1"
    )
    assert view["group"]["name"] == "Family"
    assert [(i["direction"], i["text"]) for i in view["items"]] == [
        ("out", "Hi all"),
        ("in", "Hello family"),
    ]
    assert [d["device_id"] for d in view["devices"]] == ["1", "2"]
    await agent.close()


async def test_relay_rules_for_groups(emulator: EmulatorHandle) -> None:
    installed, agent, group_id = await _online_group(emulator, ["usr_demo", "usr_ana"])
    with pytest.raises(AdminError) as outsider:
        await emulator.admin(
            "POST", f"/conversations/{group_id}/send", {"text": "x", "user_id": "usr_eve"}
        )
    assert outsider.value.status == 403
    payload = base64.b64encode(b"x").decode()
    assert agent.ws is not None
    # To one member inside a group, unencrypted, or into a group it is not part of.
    for frame in (
        {"to": "usr_ana", "encrypted": True},
        {"to": f"group:{group_id}", "encrypted": False},
    ):
        await agent.ws.send_json(
            {"type": "MSG", "id": "m1", "conversation_id": group_id, "payload_b64": payload} | frame
        )
        assert (await agent.frame())["type"] == "ERROR"
    other = await emulator.install()
    other_agent = await emulator.agent(other)
    await other_agent.connect()
    assert other_agent.ws is not None
    await other_agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m2",
            "conversation_id": group_id,
            "to": f"group:{group_id}",
            "payload_b64": payload,
            "encrypted": True,
        }
    )
    assert (await other_agent.frame())["error"] == "the agent is not a member of this conversation"
    assert await emulator.admin("GET", f"/conversations/{group_id}/inbox") == []
    for body, status in (
        ({"name": "x", "members": [], "agent_ids": [installed.agent_id]}, 400),
        ({"name": "x", "members": ["a:b"], "agent_ids": [installed.agent_id]}, 400),
        ({"name": "x", "members": ["usr_demo"], "agent_ids": ["agt_nobody"]}, 404),
        (
            {
                "name": "x",
                "members": [f"usr_{n}" for n in range(MAX_MEMBERS + 1)],
                "agent_ids": [installed.agent_id],
            },
            413,
        ),
    ):
        with pytest.raises(AdminError) as refused:
            await emulator.admin("POST", "/groups", body)
        assert refused.value.status == status, body
    await agent.close()
    await other_agent.close()


async def test_member_changes_rotate_keys_and_old_epochs_are_dropped(
    emulator: EmulatorHandle,
) -> None:
    _, agent, group_id = await _online_group(emulator, ["usr_demo", "usr_ana", "usr_ben"])
    epochs = [1]
    for change in ({"remove": ["usr_ben"]}, {"add": ["usr_cy"]}, {"remove": ["usr_cy"]}):
        changed = await emulator.admin("POST", f"/groups/{group_id}/members", change)
        epochs.append(changed["epoch"])
    assert epochs == [1, 2, 3, 4]
    envelopes = await fetch_key_envelopes(emulator, agent, group_id)
    kept = range(4 - KEPT_EPOCHS + 1, 5)
    assert {item["epoch"] for item in envelopes} == set(kept)
    # Every envelope still opens in order (skipped Signal messages are fine), and the
    # newest epoch has a key for each member of now only.
    keys = open_key_envelopes(agent, envelopes)
    newest = [item["sender_id"] for item in envelopes if item["epoch"] == 4]
    assert sorted(newest) == ["usr_ana", "usr_demo"]
    assert len(keys) == len(envelopes)
    with pytest.raises(AdminError) as gone:
        await emulator.admin(
            "POST", f"/conversations/{group_id}/send", {"text": "x", "user_id": "usr_ben"}
        )
    assert gone.value.status == 403
    unchanged = await emulator.admin("POST", f"/groups/{group_id}/members", {"add": ["usr_ana"]})
    assert unchanged["epoch"] == 4
    listed = await emulator.admin("GET", "/groups")
    assert [(g["name"], g["members"]) for g in listed] == [("Family", ["usr_demo", "usr_ana"])]
    await agent.close()


async def test_an_agent_taken_out_of_a_group_is_refused_its_keys_until_put_back(
    emulator: EmulatorHandle,
) -> None:
    installed, agent, group_id = await _online_group(emulator, ["usr_demo", "usr_ana"])
    url = f"{emulator.base_url}/agent/group-keys?conversation_id={group_id}"
    headers = {"Authorization": f"Bearer {agent.token}"}
    path = f"/groups/{group_id}/agents"
    out = await emulator.admin("POST", path, {"remove": [installed.agent_id]})
    assert out == {"agent_ids": [], "epoch": 2}
    async with emulator.session.get(url, headers=headers) as refused:
        assert refused.status == 403
    # Nothing of the group reaches it; members still write.
    await emulator.admin("POST", f"/conversations/{group_id}/send", {"text": "x"})
    back = await emulator.admin("POST", path, {"add": [installed.agent_id]})
    assert back == {"agent_ids": [installed.agent_id], "epoch": 3}
    envelopes = await fetch_key_envelopes(emulator, agent, group_id)
    assert {item["epoch"] for item in envelopes} == {3}
    with pytest.raises(AdminError) as unknown:
        await emulator.admin("POST", path, {"add": ["agt_nobody"]})
    assert unknown.value.status == 404
    await agent.close()


async def test_groups_and_their_sessions_survive_a_restart(
    tmp_path: Path, socket_enabled: None
) -> None:
    config = EmulatorConfig(state_file=tmp_path / "pacerelle.json")
    async with running_emulator(config) as first:
        installed, agent, group_id = await _online_group(first, ["usr_demo", "usr_ana"])
        keys = open_key_envelopes(agent, await fetch_key_envelopes(first, agent, group_id))
        await agent.ws.close()  # type: ignore[union-attr]

    async with running_emulator(config) as second:
        agent.session, agent.base_url = second.session, second.base_url
        agent.token = await second.runtime_token(installed.installation_token)
        await agent.connect()
        # The members' devices go on with their group sessions: the new epoch's envelopes
        # open with the sessions the agent already holds.
        await second.admin("POST", f"/groups/{group_id}/members", {"add": ["usr_ben"]})
        envelopes = [
            item
            for item in await fetch_key_envelopes(second, agent, group_id)
            if item["epoch"] == 2
        ]
        keys |= open_key_envelopes(agent, envelopes)
        await second.admin(
            "POST", f"/conversations/{group_id}/send", {"text": "still here", "user_id": "usr_ana"}
        )
        assert open_group_message(keys, await agent.frame()) == "still here"
        await agent.close()


async def test_pacerelles_own_sdk_reads_and_answers_the_group(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    """The SDK, unchanged: it fetches the members' sender keys, opens a member's group
    message with them and answers the group, which every member's devices can read."""
    sdk = load_sdk()
    _installation, runtime = await sdk_installs(emulator, sdk)
    agent = EchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        await emulator.wait_agent(runtime.agent_id, lambda status: status["connected"])
        members = ["usr_demo", "usr_ana", "usr_ben"]
        for member in members:
            await emulator.admin("POST", f"/users/{member}/devices", {"device_id": "1"})
        body = {"name": "Family", "members": members, "agent_ids": [runtime.agent_id]}
        created = await emulator.admin("POST", "/groups", body)
        group_id = created["conversation_id"]
        await emulator.admin(
            "POST", f"/conversations/{group_id}/send", {"text": "hi", "user_id": "usr_ben"}
        )
        entries = await emulator.wait_inbox(group_id, len(members))
        assert sorted((e["user_id"], e["text"]) for e in entries) == [
            (member, "echo: hi") for member in sorted(members)
        ]
        # Ben leaves: the SDK's next answer uses the new epoch, and Ben gets nothing.
        await emulator.admin("POST", f"/groups/{group_id}/members", {"remove": ["usr_ben"]})
        await emulator.admin(
            "POST", f"/conversations/{group_id}/send", {"text": "bye", "user_id": "usr_ana"}
        )
        later = (await emulator.wait_inbox(group_id, len(members) + 2))[len(members) :]
        assert sorted((e["user_id"], e["text"], e["epoch"]) for e in later) == [
            ("usr_ana", "echo: bye", 2),
            ("usr_demo", "echo: bye", 2),
        ]
        await emulator.wait_agent(runtime.agent_id, lambda status: not status["queued"])
    finally:
        await stop_echo(emulator, agent, runtime.agent_id)
