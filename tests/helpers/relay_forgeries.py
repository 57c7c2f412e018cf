"""Group sender keys a lying relay delivers over Signal sessions of its own making, and the
frames it keeps to replay."""

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from tests.emulator.human_side import HumanDevice
from tests.emulator.state import GroupRecord
from tests.helpers.agent import Agent
from tests.helpers.emulator import EmulatorHandle


def relay_delivers_sender_key(
    emulator: EmulatorHandle,
    agent: Agent,
    group: GroupRecord,
    user_id: str,
    *,
    sealer: HumanDevice,
    key_id: str,
    device_id: str = "1",
    claims: Mapping[str, str] | None = None,
) -> None:
    """A sender key of the relay's, labelled as `user_id`'s device `device_id` in `group`
    and sealed over the session `sealer` opens with the agent; the emulator seals that
    person's group messages with it from then on. `claims`: more fields of the key's JSON."""
    emu = emulator.emulator
    key = {
        "sender_id": user_id,
        "key_id": key_id,
        "epoch": group.epoch,
        "raw_key_b64": base64.b64encode(os.urandom(32)).decode(),
        "holders": list(group.members),
    }
    group.keys = [
        k for k in group.keys if (k["sender_id"], k["epoch"]) != (user_id, group.epoch)
    ] + [key]
    plaintext = json.dumps(
        {
            "type": "pacerelle.group.sender_key",
            "v": 1,
            "alg": "AES-256-GCM",
            "conversation_id": group.conversation_id,
            "key_id": key["key_id"],
            "epoch": key["epoch"],
            "raw_key_b64": key["raw_key_b64"],
            "sender_id": user_id,
            "sender_device_id": "1",
            **(claims or {}),
        }
    ).encode()
    sealed = sealer.encrypt_for(emu, agent.installed.agent_id, plaintext, group.conversation_id)
    emu.state.group_keys.append(
        {
            "conversation_id": group.conversation_id,
            "key_id": key["key_id"],
            "epoch": key["epoch"],
            "sender_id": user_id,
            "sender_device_id": device_id,
            "envelope_b64": base64.b64encode(sealed).decode(),
            "agent_id": agent.installed.agent_id,
        }
    )


def relay_delivers_own_key(
    emulator: EmulatorHandle, agent: Agent, group: GroupRecord, user_id: str, device_id: str
) -> None:
    """The relay invents a device of `user_id` and delivers, over its own new session, a
    sender key for that person. The key's JSON also claims the person's first device and
    its identity key (the agent must believe its session, never the JSON)."""
    first = emulator.emulator.humans.device(user_id, "1").identity_key_b64()
    relay_delivers_sender_key(
        emulator,
        agent,
        group,
        user_id,
        sealer=emulator.emulator.humans.device(user_id, device_id),
        key_id="gk-relay",
        device_id=device_id,
        claims={"sender_identity_b64": first},
    )


def relay_opens_session_as(
    emulator: EmulatorHandle, agent: Agent, group: GroupRecord, user_id: str
) -> None:
    """The relay, with a key of its own, delivers a group sender key as `user_id`'s device
    1 in the group: the agent's session with that device in the group is the relay's."""
    impostor = emulator.emulator.humans.device("usr_relay_made", "1")
    relay_delivers_sender_key(
        emulator, agent, group, user_id, sealer=impostor, key_id="gk-impostor"
    )


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
