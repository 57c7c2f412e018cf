"""The admin API under /_emulator/: what tests and the demo do as the user or the operator."""

from typing import Any

from aiohttp import web

from . import groups
from .agent_connect import decide
from .config import DEFAULT_DEVICE_ID, DEFAULT_USER_ID
from .context import Emulator, emulator_of
from .gateway import CLOSE_REVOKED, CLOSE_TOKEN_EXPIRED
from .http_util import ApiError, new_secret, read_json_object, require_str
from .state import ConnectKey
from .verification import verification_code_b64

# Signal's limit for the devices of one account.
MAX_DEVICE_ID = 127

PREFIX = "/_emulator"


async def create_connect_key(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    user_id = body.get("user_id") or DEFAULT_USER_ID
    if not isinstance(user_id, str) or ":" in user_id:
        raise ApiError(400, "`user_id` must be a string without colons")
    key = ConnectKey(new_secret("pck"), user_id, emulator.now())
    emulator.state.connect_keys[key.key] = key
    emulator.commit()
    return web.json_response({"connect_key": key.key, "user_id": user_id})


async def connect_key_status(request: web.Request) -> web.Response:
    """Whether a connection key was spent (the chat page clears a spent key)."""
    key = emulator_of(request).state.connect_keys.get(request.match_info["key"])
    if key is None:
        raise ApiError(404, "unknown connection key")
    return web.json_response({"user_id": key.user_id, "used": key.used_at is not None})


async def list_requests(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    now = emulator.now()
    return web.json_response(
        [
            {**item.to_json(), "code": None, "expired": now >= item.expires_at}
            for item in emulator.state.requests.values()
        ]
    )


async def approve(request: web.Request) -> web.Response:
    url = decide(emulator_of(request), request.match_info["request_id"], approve=True)
    return web.json_response({"redirect_url": url})


async def deny(request: web.Request) -> web.Response:
    url = decide(emulator_of(request), request.match_info["request_id"], approve=False)
    return web.json_response({"redirect_url": url})


async def send(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    conversation_id = request.match_info["conversation_id"]
    group = groups.group_of(emulator, conversation_id)
    if group is not None:
        # `user_id` says which member writes (the group's owner by default).
        message_id = await groups.send(emulator, group, body)
    else:
        message_id = await emulator.humans.send(conversation_id, body)
    return web.json_response({"message_id": message_id})


async def inbox(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    conversation_id = request.match_info["conversation_id"]
    group = groups.group_of(emulator, conversation_id)
    if group is not None:
        query = request.query
        return web.json_response(groups.inbox(group, query.get("user_id"), query.get("device_id")))
    emulator.humans.installation(conversation_id)
    entries = emulator.state.conversation_log(conversation_id).inbox
    device_id = request.query.get("device_id")
    return web.json_response(
        [entry for entry in entries if device_id is None or entry["device_id"] == device_id]
    )


async def timeline(request: web.Request) -> web.Response:
    """Sent and received messages in time order, for the chat page."""
    emulator = emulator_of(request)
    conversation_id = request.match_info["conversation_id"]
    group = groups.group_of(emulator, conversation_id)
    if group is not None:
        user_id = request.query.get("user_id") or group.owner_id
        device_id = request.query.get("device_id") or DEFAULT_DEVICE_ID
        return web.json_response(groups.timeline(emulator, group, user_id, device_id))
    installation = emulator.humans.installation(conversation_id)
    log = emulator.state.conversation_log(conversation_id)
    items: list[dict[str, Any]] = [
        *({"direction": "out", **entry} for entry in log.sent),
        *({"direction": "in", "at": item["received_at"], **_page_view(item)} for item in log.inbox),
    ]
    items.sort(key=lambda item: item["at"])
    devices = emulator.humans.devices_of(installation.owner_id)
    return web.json_response(
        {
            "installation": installation.to_json() | {"installation_token": None},
            "agent_verification_code": _agent_code(emulator, installation.agent_id),
            "devices": [device.describe() for device in devices],
            "items": items,
        }
    )


def _page_view(entry: dict[str, Any]) -> dict[str, Any]:
    """An inbox entry without its files' contents: the page polls the timeline every second
    and loads each file once, from chat_files.py."""
    if not isinstance(entry.get("files"), list):
        return entry
    files = [{k: v for k, v in item.items() if k != "content_b64"} for item in entry["files"]]
    return {**entry, "files": files}


async def reset_device(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    conversation_id = request.match_info["conversation_id"]
    await emulator.humans.reset_device(conversation_id, request.match_info["device_id"])
    return web.json_response({"reset": True})


async def add_device(request: web.Request) -> web.Response:
    """A second (third...) phone of a person: a new identity key, or one it already has."""
    emulator = emulator_of(request)
    body = await read_json_object(request)
    device_id = _device_id(body.get("device_id"), "device_id")
    source = body.get("same_identity_as")
    same_as = None if source is None else _device_id(source, "same_identity_as")
    user_id = request.match_info["user_id"]
    device = emulator.humans.add_device(user_id, device_id, same_as)
    return web.json_response(device.describe(), status=201)


async def list_devices(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    devices = emulator.humans.devices_of(request.match_info["user_id"])
    return web.json_response([device.describe() for device in devices])


def _device_id(value: Any, name: str) -> str:
    # As Signal's (and the agent's) device ids: small positive integers, sent as strings.
    text = str(value) if type(value) is int else value
    if not isinstance(text, str) or not text.isdigit() or not 0 < int(text) <= MAX_DEVICE_ID:
        raise ApiError(400, f"`{name}` must be a device id from 1 to {MAX_DEVICE_ID}")
    return str(int(text))


async def add_group_key(request: web.Request) -> web.Response:
    """Stores a group key envelope for an agent, as a group member's app would upload it."""
    emulator = emulator_of(request)
    body = await read_json_object(request)
    for name in ("agent_id", "conversation_id", "key_id", "sender_id", "envelope_b64"):
        require_str(body, name)
    if type(body.get("epoch")) is not int:
        raise ApiError(400, "`epoch` must be an integer")
    fields = (*_GROUP_KEY_FIELDS, "agent_id")
    emulator.state.group_keys.append({name: body[name] for name in fields if name in body})
    emulator.commit()
    return web.json_response({"stored": True})


_GROUP_KEY_FIELDS = (
    "conversation_id",
    "key_id",
    "epoch",
    "sender_id",
    "sender_device_id",
    "envelope_b64",
)


async def installations(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    return web.json_response(
        [
            {
                "agent_id": item.agent_id,
                "owner_id": item.owner_id,
                "conversation_id": item.conversation_id,
                "agent_name": item.agent_name,
                "agent_description": item.agent_description,
                "client_id": item.client_id,
                "revoked": item.revoked,
                "connected": emulator.hub.is_connected(item.agent_id),
                "verification_code": _agent_code(emulator, item.agent_id),
            }
            for item in emulator.state.installations.values()
        ]
    )


def _agent_code(emulator: Emulator, agent_id: str) -> str | None:
    bundle = emulator.state.keys_for(agent_id).bundle
    return verification_code_b64(bundle.get("identity_key") if bundle else None)


async def revoke(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    agent_id = request.match_info["agent_id"]
    installation = emulator.state.installations.get(agent_id)
    if installation is None:
        raise ApiError(404, "unknown installation")
    installation.revoked = True
    tokens = emulator.state.runtime_tokens
    for token in [key for key, item in tokens.items() if item.agent_id == agent_id]:
        del tokens[token]
    emulator.commit()
    emulator.record("installation_revoked", agent_id=agent_id)
    await emulator.hub.close_agent(agent_id, CLOSE_REVOKED, "installation revoked")
    return web.json_response({"agent_id": agent_id, "revoked": True})


async def agent_status(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    agent_id = request.match_info["agent_id"]
    if agent_id not in emulator.state.installations:
        raise ApiError(404, "unknown agent")
    keys = emulator.state.keys_for(agent_id)
    bundle = keys.bundle or {}
    return web.json_response(
        {
            "agent_id": agent_id,
            "connected": emulator.hub.is_connected(agent_id),
            "bundle_published": keys.bundle is not None,
            "identity_key": bundle.get("identity_key"),
            "verification_code": verification_code_b64(bundle.get("identity_key")),
            "protocol_features": bundle.get("protocol_features"),
            "one_time_prekeys": len(keys.one_time_prekeys),
            "one_time_prekeys_handed_out": keys.handed_out,
            "queued": [item["id"] for item in emulator.state.queues.get(agent_id, [])],
        }
    )


async def get_faults(request: web.Request) -> web.Response:
    return web.json_response(emulator_of(request).faults.to_json())


async def post_faults(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    emulator.faults.update(body)
    result: dict[str, Any] = {"faults": emulator.faults.to_json()}
    if body.get("expire_runtime_tokens") is True:
        now = emulator.now()
        for token in emulator.state.runtime_tokens.values():
            token.expires_at = min(token.expires_at, now)
        emulator.commit()
        for agent_id in list(emulator.hub.connections):
            await emulator.hub.close_agent(agent_id, CLOSE_TOKEN_EXPIRED, "runtime token expired")
    drop = body.get("drop_connections")
    if drop in (True, "close", "abort"):
        result["dropped"] = await emulator.hub.drop_all(abort=drop == "abort")
    frames = body.get("inject_frames")
    if frames is not None:
        if not isinstance(frames, list) or not all(isinstance(item, str) for item in frames):
            raise ApiError(400, "`inject_frames` must be a list of strings")
        target = body.get("agent_id")
        result["injected"] = await emulator.hub.inject(
            target if isinstance(target, str) else None, frames
        )
    emulator.record("faults", fields=sorted(body))
    return web.json_response(result)


async def clock(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    seconds = body.get("advance_seconds", 0)
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
        raise ApiError(400, "`advance_seconds` must be a non-negative number")
    emulator.clock.advance(float(seconds))
    emulator.commit()
    return web.json_response({"now": emulator.now(), "offset": emulator.clock.offset})


async def events(request: web.Request) -> web.Response:
    kind = request.query.get("kind")
    return web.json_response(
        [item for item in emulator_of(request).events if kind is None or item["kind"] == kind]
    )


def routes() -> list[web.AbstractRouteDef]:
    return [
        web.post(f"{PREFIX}/connect-keys", create_connect_key),
        web.get(f"{PREFIX}/connect-keys/{{key}}", connect_key_status),
        web.get(f"{PREFIX}/requests", list_requests),
        web.post(f"{PREFIX}/requests/{{request_id}}/approve", approve),
        web.post(f"{PREFIX}/requests/{{request_id}}/deny", deny),
        web.post(f"{PREFIX}/conversations/{{conversation_id}}/send", send),
        web.get(f"{PREFIX}/conversations/{{conversation_id}}/inbox", inbox),
        web.get(f"{PREFIX}/conversations/{{conversation_id}}/timeline", timeline),
        web.post(
            f"{PREFIX}/conversations/{{conversation_id}}/devices/{{device_id}}/reset", reset_device
        ),
        web.post(f"{PREFIX}/users/{{user_id}}/devices", add_device),
        web.get(f"{PREFIX}/users/{{user_id}}/devices", list_devices),
        web.post(f"{PREFIX}/group-keys", add_group_key),
        web.get(f"{PREFIX}/installations", installations),
        web.post(f"{PREFIX}/installations/{{agent_id}}/revoke", revoke),
        web.get(f"{PREFIX}/agents/{{agent_id}}", agent_status),
        web.get(f"{PREFIX}/faults", get_faults),
        web.post(f"{PREFIX}/faults", post_faults),
        web.post(f"{PREFIX}/clock", clock),
        web.get(f"{PREFIX}/events", events),
    ]
