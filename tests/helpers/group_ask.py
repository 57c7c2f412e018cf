"""`pacerelle.ask` in the family group: the question on every phone, members' answers
(and one the relay forges), and the event each answer fires."""

import base64
import json
import os
import uuid
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from homeassistant.core import HomeAssistant

from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import ANA, BEN, DEVICES, family_group, member_writes
from tests.helpers.services import call, trust


async def trusted_family(
    hass: HomeAssistant, emulator: EmulatorHandle, trusted: tuple[str, ...] = ("owner", ANA, BEN)
) -> tuple[Agent, str, list[str]]:
    """The family group; each member wrote once from phone 1, trusted by the user when
    named in `trusted` ("owner" for the agent's owner)."""
    agent = await start_agent(hass, emulator)
    group_id, members = await family_group(emulator, agent)
    owner = agent.installed.owner_id
    for member in members:
        await member_writes(emulator, agent, group_id, text="hi", user_id=member, device_id="1")
        if ("owner" if member == owner else member) in trusted:
            decided = await trust(hass, emulator, member, "1")
            assert decided["trust_state"] == "trusted"
    return agent, group_id, members


def ask(hass: HomeAssistant, group_id: str, mode: str, timeout: float = 10) -> Any:
    """The question to the whole group, as a task (it waits for the answers)."""
    return hass.async_create_task(
        call(
            hass,
            "ask",
            {
                "kind": "confirm",
                "title": "Leave the porch light on?",
                "conversation_id": group_id,
                "to": f"group:{group_id}",
                "response_mode": mode,
                "timeout": timeout,
            },
        )
    )


async def widget_on_every_phone(
    emulator: EmulatorHandle, group_id: str, members: list[str], mode: str
) -> str:
    """The question reached every device of every member, with its response mode; its id."""
    entries = await emulator.wait_inbox(group_id, len(members) * len(DEVICES))
    assert sorted((e["user_id"], e["device_id"]) for e in entries) == sorted(
        (member, device_id) for member in members for device_id in DEVICES
    )
    assert {(e["kind"], e["payload"]["response_mode"]) for e in entries} == {
        ("widget.standard", mode)
    }
    return str(entries[0]["payload"]["id"])


async def answer(
    emulator: EmulatorHandle,
    group_id: str,
    widget_id: str,
    user_id: str,
    value: Any,
    device_id: str = "1",
) -> str:
    sent = await emulator.admin(
        "POST",
        f"/conversations/{group_id}/send",
        {
            "widget_response": {"ref": widget_id, "value": value},
            "user_id": user_id,
            "device_id": device_id,
        },
    )
    return str(sent["message_id"])


async def relay_forges_answer(
    emulator: EmulatorHandle, agent: Agent, group_id: str, user_id: str, widget_id: str
) -> str:
    """A relay delivers an answer "from" someone the group no longer has, sealed with the
    newest key they held (which the agent still holds, for messages queued before)."""
    group = emulator.emulator.state.groups[group_id]
    key = max((k for k in group.keys if k["sender_id"] == user_id), key=lambda k: k["epoch"])
    plaintext = json.dumps(
        {"type": "widget.response", "id": str(uuid.uuid4()), "ref": widget_id, "value": True}
    )
    iv = os.urandom(12)
    aad = f"pacerelle:group-message:v1:{group_id}:{key['key_id']}:{key['epoch']}".encode()
    sealed = AESGCM(base64.b64decode(key["raw_key_b64"])).encrypt(iv, plaintext.encode(), aad)
    payload = {
        "type": "pacerelle.group.message",
        "v": 1,
        "alg": "AES-256-GCM",
        "conversation_id": group_id,
        "key_id": key["key_id"],
        "epoch": key["epoch"],
        "iv_b64": base64.b64encode(iv).decode(),
        "ciphertext_b64": base64.b64encode(sealed).decode(),
    }
    message_id = str(uuid.uuid4())
    await emulator.emulator.hub.enqueue(
        agent.installed.agent_id,
        {
            "type": "MSG",
            "id": message_id,
            "conversation_id": group_id,
            "from": user_id,
            "from_device_id": "1",
            "to": f"group:{group_id}",
            "payload_b64": base64.b64encode(json.dumps(payload).encode()).decode(),
            "encrypted": True,
        },
    )
    return message_id


def answered_event(agent: Agent, message_id: str) -> bool:
    return any(event.data["message_id"] == message_id for event in agent.events)
