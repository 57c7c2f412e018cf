"""The reference agent's side of a group, as the SDK does it: fetch the members' sender key
envelopes, open them with each sender's session in the group, open a group message and
seal one with the newest key (for the emulator's and the chat page's group tests)."""

import base64
import json
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.emulator.reference_agent import ReferenceAgent
from tests.helpers.emulator import EmulatorHandle

Json = dict[str, Any]
GroupKeys = dict[tuple[str, int], bytes]


def group_aad(conversation_id: str, key_id: str, epoch: int) -> bytes:
    return f"pacerelle:group-message:v1:{conversation_id}:{key_id}:{epoch}".encode()


async def fetch_key_envelopes(
    emulator: EmulatorHandle, agent: ReferenceAgent, group_id: str
) -> list[Json]:
    url = f"{emulator.base_url}/agent/group-keys?conversation_id={group_id}"
    async with emulator.session.get(url, headers={"Authorization": f"Bearer {agent.token}"}) as r:
        assert r.status == 200
        envelopes: list[Json] = await r.json()
    return envelopes


def open_key_envelopes(agent: ReferenceAgent, envelopes: list[Json]) -> GroupKeys:
    """Each envelope opened as the SDK does: with the sender's session in this group."""
    keys = {}
    for item in envelopes:
        sender = {"from": item["sender_id"], "from_device_id": item["sender_device_id"]}
        name = ReferenceAgent.human_name({**sender, "conversation_id": item["conversation_id"]})
        plain = json.loads(agent.peer.decrypt(name, base64.b64decode(item["envelope_b64"])))
        assert plain["type"] == "pacerelle.group.sender_key"
        assert (plain["conversation_id"], plain["key_id"], plain["epoch"]) == (
            item["conversation_id"],
            item["key_id"],
            item["epoch"],
        )
        keys[(plain["key_id"], plain["epoch"])] = base64.b64decode(plain["raw_key_b64"])
    return keys


def open_group_message(keys: GroupKeys, envelope: Json) -> str:
    payload = json.loads(base64.b64decode(envelope["payload_b64"]))
    assert payload["type"] == "pacerelle.group.message"
    key = keys[(payload["key_id"], payload["epoch"])]
    plain = AESGCM(key).decrypt(
        base64.b64decode(payload["iv_b64"]),
        base64.b64decode(payload["ciphertext_b64"]),
        group_aad(envelope["conversation_id"], payload["key_id"], payload["epoch"]),
    )
    return plain.decode()


def seal_group_message(keys: GroupKeys, group_id: str, text: str) -> str:
    (key_id, epoch), raw = max(keys.items(), key=lambda item: item[0][1])
    iv = b"\x01" * 12
    sealed = AESGCM(raw).encrypt(iv, text.encode(), group_aad(group_id, key_id, epoch))
    payload = {
        "type": "pacerelle.group.message",
        "v": 1,
        "alg": "AES-256-GCM",
        "conversation_id": group_id,
        "key_id": key_id,
        "epoch": epoch,
        "iv_b64": base64.b64encode(iv).decode(),
        "ciphertext_b64": base64.b64encode(sealed).decode(),
    }
    return base64.b64encode(json.dumps(payload).encode()).decode()
