"""The owner's group key reaching the agent over Signal, and a group message sealed with it:
what the relay lists and delivers when the owner writes to a group through their phone 1."""

import base64
import json

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from custom_components.pacerelle.client.values import groups
from tests.emulator.human_side import HumanDevice
from tests.helpers.emulator import EmulatorHandle, Installed


async def owner_group_key(
    emulator: EmulatorHandle, installed: Installed
) -> tuple[groups.GroupKey, HumanDevice]:
    """A new key "gk1" (epoch 1) of the owner's conversation, sealed over Signal by the owner's
    phone 1 and listed by the relay for the agent; the key and that phone."""
    conversation = installed.conversation_id
    key = groups.GroupKey(conversation, "gk1", 1, AESGCM.generate_key(bit_length=256))
    device = emulator.emulator.humans.device(installed.owner_id, "1")
    envelope = device.encrypt_for(
        emulator.emulator, installed.agent_id, json.dumps(key.to_json()).encode()
    )
    await emulator.admin(
        "POST",
        "/group-keys",
        {
            "agent_id": installed.agent_id,
            "conversation_id": conversation,
            "key_id": "gk1",
            "epoch": 1,
            "sender_id": installed.owner_id,
            "sender_device_id": "1",
            "envelope_b64": base64.b64encode(envelope).decode(),
        },
    )
    return key, device


async def owner_group_message(
    emulator: EmulatorHandle, installed: Installed, key: groups.GroupKey, message_id: str, text: str
) -> None:
    """The relay delivers `text`, sealed with `key`, from the owner's phone 1 to the group."""
    frame = {
        "type": "MSG",
        "id": message_id,
        "conversation_id": key.conversation_id,
        "from": installed.owner_id,
        "from_device_id": "1",
        "to": f"group:{key.conversation_id}",
        "payload_b64": base64.b64encode(groups.seal_message(key, text)).decode(),
        "encrypted": True,
    }
    await emulator.faults(inject_frames=[json.dumps(frame)])
