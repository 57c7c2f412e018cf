"""Group conversations, as Pacerelle's apps and SDK run them.

Each member has a sender key (AES-256-GCM) per epoch of the group. A member's first device
sends it to every agent of the group as a Signal message over a session of its own for the
group (the agent keys sessions by person, conversation and device), and the relay keeps
these envelopes for `/agent/group-keys`. Members seal group messages with their current
key; the agent seals with the newest key it holds. Any change of members starts a new
epoch: every remaining member makes a new key, so a member who left holds none of the keys
used afterwards, and the relay no longer delivers to them either.

Between humans, keys are shared inside the emulator (no agent sees that part of the
protocol). Group messages carry text or widget answers; files are refused (not modelled).
"""

import base64
import binascii
import json
import os
import secrets
import time
import uuid
from typing import Any

from aiohttp import web
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .config import DEFAULT_DEVICE_ID
from .context import Emulator, emulator_of
from .gateway_frames import FrameError
from .http_util import ApiError, new_id, read_json_object, require_str
from .human_payloads import build_plaintext, describe_plaintext
from .state import GroupRecord, Installation, Json
from .verification import verification_code_b64

MAX_GROUPS = 64
MAX_MEMBERS = 32
MAX_GROUP_AGENTS = 8
MAX_NAME_CHARS = 100
# Sender keys of older epochs are dropped, for the agent's envelopes too: the agent's list
# of envelopes stays bounded (the integration takes at most 256), and only a message still
# queued from two changes of members ago is lost.
KEPT_EPOCHS = 2
ALGORITHM = "AES-256-GCM"
PREFIX = "/_emulator/groups"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def group_target(conversation_id: str) -> str:
    return f"group:{conversation_id}"


def _aad(conversation_id: str, key_id: str, epoch: int) -> bytes:
    return f"pacerelle:group-message:v1:{conversation_id}:{key_id}:{epoch}".encode()


def _user_ids(value: Any, name: str, *, allow_empty: bool = False) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(item, str) and item and ":" not in item for item in value
    ):
        raise ApiError(400, f"`{name}` must be a list of ids without colons")
    if not value and not allow_empty:
        raise ApiError(400, f"`{name}` must not be empty")
    return list(dict.fromkeys(value))


def group_of(emulator: Emulator, conversation_id: str) -> GroupRecord | None:
    return emulator.state.groups.get(conversation_id)


def _current_key(group: GroupRecord, user_id: str) -> Json:
    return next(
        key for key in group.keys if key["sender_id"] == user_id and key["epoch"] == group.epoch
    )


def _distribute(emulator: Emulator, group: GroupRecord, key: Json) -> None:
    """The member's first device Signal-encrypts its sender key for every agent."""
    sender = key["sender_id"]
    devices = emulator.humans.devices_of(sender)
    device = devices[0] if devices else emulator.humans.device(sender, DEFAULT_DEVICE_ID)
    plaintext = json.dumps(
        {
            "type": "pacerelle.group.sender_key",
            "v": 1,
            "alg": ALGORITHM,
            "conversation_id": group.conversation_id,
            "key_id": key["key_id"],
            "epoch": key["epoch"],
            "raw_key_b64": key["raw_key_b64"],
        }
    ).encode()
    for agent_id in group.agent_ids:
        framed = device.encrypt_for(emulator, agent_id, plaintext, group.conversation_id)
        emulator.state.group_keys.append(
            {
                "conversation_id": group.conversation_id,
                "key_id": key["key_id"],
                "epoch": key["epoch"],
                "sender_id": sender,
                "sender_device_id": device.record.device_id,
                "envelope_b64": _b64(framed),
                "agent_id": agent_id,
            }
        )


def rotate(emulator: Emulator, group: GroupRecord) -> None:
    """A new epoch: a fresh sender key for each member, held by the members of now."""
    group.epoch += 1
    oldest = group.epoch - KEPT_EPOCHS + 1
    group.keys = [key for key in group.keys if key["epoch"] >= oldest]
    emulator.state.group_keys = [
        item
        for item in emulator.state.group_keys
        if item.get("conversation_id") != group.conversation_id or item["epoch"] >= oldest
    ]
    for member in group.members:
        key: Json = {
            "sender_id": member,
            "key_id": new_id("gk", 8),
            "epoch": group.epoch,
            "raw_key_b64": _b64(secrets.token_bytes(32)),
            "holders": list(group.members),
        }
        group.keys.append(key)
        _distribute(emulator, group, key)
    emulator.record("group_keys_rotated", conversation_id=group.conversation_id, epoch=group.epoch)


async def create_group(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    name = require_str(body, "name")
    if len(name) > MAX_NAME_CHARS:
        raise ApiError(400, f"`name` is at most {MAX_NAME_CHARS} characters")
    members = _user_ids(body.get("members"), "members")
    agent_ids = _user_ids(body.get("agent_ids"), "agent_ids")
    if len(members) > MAX_MEMBERS or len(agent_ids) > MAX_GROUP_AGENTS:
        raise ApiError(413, f"at most {MAX_MEMBERS} members and {MAX_GROUP_AGENTS} agents")
    if len(emulator.state.groups) >= MAX_GROUPS:
        raise ApiError(409, f"at most {MAX_GROUPS} groups")
    for agent_id in agent_ids:
        installation = emulator.state.installations.get(agent_id)
        if installation is None or installation.revoked:
            raise ApiError(404, f"unknown agent {agent_id}")
    # The relay names its conversations: a hostile one may choose any printable id.
    chosen = body.get("conversation_id")
    if chosen is not None and not (isinstance(chosen, str) and chosen.isprintable() and chosen):
        raise ApiError(400, "`conversation_id` must be a printable string")
    if chosen in emulator.state.groups:
        raise ApiError(409, f"group {chosen} exists")
    group = GroupRecord(chosen or new_id("conv"), name, members[0], members, agent_ids)
    rotate(emulator, group)
    emulator.state.groups[group.conversation_id] = group
    emulator.commit()
    emulator.record("group_created", conversation_id=group.conversation_id)
    return web.json_response({"conversation_id": group.conversation_id}, status=201)


async def change_members(request: web.Request) -> web.Response:
    """`{add?: [user ids], remove?: [user ids]}`; any change starts a new epoch."""
    emulator = emulator_of(request)
    group = _group(emulator, request.match_info["conversation_id"])
    body = await read_json_object(request)
    added = _user_ids(body.get("add", []), "add", allow_empty=True)
    removed = set(_user_ids(body.get("remove", []), "remove", allow_empty=True))
    members = [m for m in group.members if m not in removed]
    members += [m for m in added if m not in members]
    if not members:
        raise ApiError(400, "a group keeps at least one member")
    if len(members) > MAX_MEMBERS:
        raise ApiError(413, f"at most {MAX_MEMBERS} members")
    if members != group.members:
        group.members = members
        rotate(emulator, group)
        emulator.commit()
    return web.json_response({"members": group.members, "epoch": group.epoch})


async def change_agents(request: web.Request) -> web.Response:
    """`{add?: [agent ids], remove?: [agent ids]}`: agents taken out of or put back into the
    group. As for people, a change starts a new epoch, whose keys only the agents of now
    get; a removed agent's envelopes of the group are gone, so `/agent/group-keys` refuses
    it (403, as for any conversation it is not in) and nothing of the group reaches it."""
    emulator = emulator_of(request)
    group = _group(emulator, request.match_info["conversation_id"])
    body = await read_json_object(request)
    added = _user_ids(body.get("add", []), "add", allow_empty=True)
    removed = set(_user_ids(body.get("remove", []), "remove", allow_empty=True))
    for agent_id in added:
        installation = emulator.state.installations.get(agent_id)
        if installation is None or installation.revoked:
            raise ApiError(404, f"unknown agent {agent_id}")
    agent_ids = [a for a in group.agent_ids if a not in removed]
    agent_ids += [a for a in added if a not in agent_ids]
    if len(agent_ids) > MAX_GROUP_AGENTS:
        raise ApiError(413, f"at most {MAX_GROUP_AGENTS} agents")
    if agent_ids != group.agent_ids:
        group.agent_ids = agent_ids
        emulator.state.group_keys = [
            item
            for item in emulator.state.group_keys
            if item.get("conversation_id") != group.conversation_id
            or item.get("agent_id") in agent_ids
        ]
        rotate(emulator, group)
        emulator.commit()
    return web.json_response({"agent_ids": group.agent_ids, "epoch": group.epoch})


async def list_groups(request: web.Request) -> web.Response:
    groups = emulator_of(request).state.groups.values()
    return web.json_response(
        [
            {
                "conversation_id": group.conversation_id,
                "name": group.name,
                "owner_id": group.owner_id,
                "members": group.members,
                "agent_ids": group.agent_ids,
                "epoch": group.epoch,
            }
            for group in groups
        ]
    )


def _group(emulator: Emulator, conversation_id: str) -> GroupRecord:
    group = group_of(emulator, conversation_id)
    if group is None:
        raise ApiError(404, "unknown group")
    return group


async def send(emulator: Emulator, group: GroupRecord, body: Json) -> str:
    """A member writes to the group: sealed once with their sender key, relayed to agents."""
    user_id = body.get("user_id") or group.owner_id
    if user_id not in group.members:
        raise ApiError(403, "only a member writes to the group")
    if body.get("attachments"):
        raise ApiError(400, "files in groups are not modelled by the emulator")
    device_id = str(body.get("device_id") or DEFAULT_DEVICE_ID)
    emulator.humans.device(user_id, device_id)
    plaintext, _, kind = build_plaintext(emulator, _any_installation(emulator, group), body)
    key = _current_key(group, user_id)
    iv = os.urandom(12)
    sealed = AESGCM(base64.b64decode(key["raw_key_b64"])).encrypt(
        iv, plaintext.encode(), _aad(group.conversation_id, key["key_id"], key["epoch"])
    )
    payload = {
        "type": "pacerelle.group.message",
        "v": 1,
        "alg": ALGORITHM,
        "conversation_id": group.conversation_id,
        "key_id": key["key_id"],
        "epoch": key["epoch"],
        "iv_b64": _b64(iv),
        "ciphertext_b64": _b64(sealed),
    }
    envelope: Json = {
        "type": "MSG",
        "id": str(uuid.uuid4()),
        "conversation_id": group.conversation_id,
        "from": user_id,
        "from_device_id": device_id,
        "to": group_target(group.conversation_id),
        "payload_b64": _b64(json.dumps(payload, separators=(",", ":")).encode()),
        "encrypted": True,
    }
    if isinstance(body.get("reply_to_message_id"), str):
        envelope["reply_to_message_id"] = body["reply_to_message_id"]
    group.sent.append(
        {
            "message_id": envelope["id"],
            "user_id": user_id,
            "device_id": device_id,
            "kind": kind,
            "text": plaintext,
            "epoch": key["epoch"],
            "at": emulator.now(),
        }
    )
    emulator.commit()
    for agent_id in group.agent_ids:
        await emulator.hub.enqueue(agent_id, dict(envelope))
    emulator.record("group_sent", conversation_id=group.conversation_id, message_id=envelope["id"])
    return str(envelope["id"])


def _any_installation(emulator: Emulator, group: GroupRecord) -> Installation:
    # build_plaintext only reads an installation to upload files, which groups refuse.
    agent_id = group.agent_ids[0] if group.agent_ids else next(iter(emulator.state.installations))
    return emulator.state.installations[agent_id]


def check_agent_group_message(group: GroupRecord, installation: Installation, frame: Json) -> Json:
    """The relay's rules for an agent writing to a group: member agent, `to` the group."""
    if installation.agent_id not in group.agent_ids:
        raise FrameError("the agent is not a member of this conversation")
    message_id = frame.get("id")
    if not isinstance(message_id, str) or not message_id:
        raise FrameError("`id` must be a non-empty string")
    if frame.get("to") != group_target(group.conversation_id):
        raise FrameError("in a group, an agent writes to the whole group")
    if frame.get("encrypted") is not True:
        raise FrameError("group messages are encrypted")
    payload = frame.get("payload_b64")
    try:
        if not isinstance(payload, str) or not base64.b64decode(payload, validate=True):
            raise FrameError("`payload_b64` must be non-empty base64")
    except binascii.Error as err:
        raise FrameError("`payload_b64` must be non-empty base64") from err
    envelope: Json = {
        "type": "MSG",
        "id": message_id,
        "conversation_id": group.conversation_id,
        "from": installation.agent_id,
        "to": frame["to"],
        "payload_b64": payload,
        "encrypted": True,
    }
    if isinstance(frame.get("reply_to_message_id"), str):
        envelope["reply_to_message_id"] = frame["reply_to_message_id"]
    return envelope


def deliver_from_agent(emulator: Emulator, group: GroupRecord, envelope: Json) -> None:
    """Every device of every member of now receives it, opened with that member's keys."""
    if any(entry["message_id"] == envelope["id"] for entry in group.inbox):
        emulator.record("duplicate_agent_message", message_id=envelope["id"])
        return
    for member in group.members:
        opened = _open(emulator, group, member, envelope["payload_b64"])
        for device in emulator.humans.devices_of(member):
            group.inbox.append(
                {
                    "message_id": envelope["id"],
                    "conversation_id": group.conversation_id,
                    "from": envelope["from"],
                    "to": envelope["to"],
                    "user_id": member,
                    "device_id": device.record.device_id,
                    "reply_to_message_id": envelope.get("reply_to_message_id"),
                    "received_at": emulator.now(),
                    "received_wall": time.time(),
                    **opened,
                }
            )
    emulator.commit()
    emulator.record("agent_sent", agent_id=envelope["from"], message_id=envelope["id"])


def _open(emulator: Emulator, group: GroupRecord, member: str, payload_b64: str) -> Json:
    try:
        payload = json.loads(base64.b64decode(payload_b64))
        key_id, epoch = payload["key_id"], payload["epoch"]
    except (ValueError, TypeError, KeyError) as err:
        return {"kind": "undecryptable", "error": f"not a group payload: {err}"}
    key = next(
        (
            item
            for item in group.keys
            if (item["key_id"], item["epoch"]) == (key_id, epoch) and member in item["holders"]
        ),
        None,
    )
    if key is None or payload.get("conversation_id") != group.conversation_id:
        return {"kind": "undecryptable", "error": "no such key", "epoch": epoch}
    try:
        plain = AESGCM(base64.b64decode(key["raw_key_b64"])).decrypt(
            base64.b64decode(payload["iv_b64"]),
            base64.b64decode(payload["ciphertext_b64"]),
            _aad(group.conversation_id, key_id, epoch),
        )
        text = plain.decode()
    except (InvalidTag, ValueError, KeyError, binascii.Error) as err:
        return {"kind": "undecryptable", "error": f"does not decrypt: {err}", "epoch": epoch}
    return {"text": text, "epoch": epoch, "key_id": key_id, **describe_plaintext(emulator, text)}


def inbox(group: GroupRecord, user_id: str | None, device_id: str | None) -> list[Json]:
    return [
        entry
        for entry in group.inbox
        if (user_id is None or entry["user_id"] == user_id)
        and (device_id is None or entry["device_id"] == device_id)
    ]


def timeline(emulator: Emulator, group: GroupRecord, user_id: str, device_id: str) -> Json:
    """The chat page's view of a group as one member on one device: what they sent, and
    what that device received, in time order (the shape of a direct timeline, plus `group`)."""
    items: list[Json] = [
        *(
            {"direction": "out", "encrypted": True, **e}
            for e in group.sent
            if e["user_id"] == user_id
        ),
        *(
            {"direction": "in", "at": e["received_at"], "encrypted": True, **e}
            for e in inbox(group, user_id, device_id)
        ),
    ]
    items.sort(key=lambda item: item["at"])
    bundle = emulator.state.keys_for(group.agent_ids[0]).bundle if group.agent_ids else None
    return {
        "group": {
            "conversation_id": group.conversation_id,
            "name": group.name,
            "members": group.members,
            "epoch": group.epoch,
        },
        "installation": {
            "agent_name": group.name,
            "conversation_id": group.conversation_id,
            "revoked": False,
        },
        "agent_verification_code": verification_code_b64(
            bundle.get("identity_key") if bundle else None
        ),
        "devices": [device.describe() for device in emulator.humans.devices_of(user_id)],
        "items": items,
    }


def routes() -> list[web.AbstractRouteDef]:
    return [
        web.post(PREFIX, create_group),
        web.get(PREFIX, list_groups),
        web.post(f"{PREFIX}/{{conversation_id}}/members", change_members),
        web.post(f"{PREFIX}/{{conversation_id}}/agents", change_agents),
    ]
