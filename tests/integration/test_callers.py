"""Home Assistant users who are not administrators, over the websocket API (callers.py).

A real user of the "Users" group (a wall tablet's account) and one limited to some
entities by a policy call every action and the LLM API as the frontend, a script or a
conversation agent of theirs would: they read nothing, decide nothing, drop nothing, and
send only within their own permissions; no refusal tells a code or a text.
"""

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.pacerelle.actions.conversation import conversation_entity
from custom_components.pacerelle.callers import NotAllowed
from custom_components.pacerelle.client import TrustState
from custom_components.pacerelle.llm.read_tools import GetHistoryTool
from tests.helpers.agent import go_offline
from tests.helpers.cameras import add_camera
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import LLM_CONTEXT
from tests.helpers.scripted_model import Results, install_model, setup_conversation
from tests.helpers.services import call, human_writes, shown_code
from tests.helpers.trust import a_new_phone, shown
from tests.helpers.users import limited_user, ws_call

SECRET = "The alarm code is 4711"
PHOTO = b"\xff\xd8\xff\xe0 the owner's photo" * 10


def refusal(answer: dict[str, Any], key: str) -> str:
    """The websocket's error for a refused call, translated as `key`; its message."""
    assert answer["success"] is False, answer
    error = answer["error"]
    assert error.get("translation_key") == key, error
    message: str = error["message"]
    return message


async def test_a_limited_user_reads_nothing_decides_nothing_drops_nothing(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    hass_ws_client: WebSocketGenerator,
    tmp_path: Path,
) -> None:
    agent, _new_phone = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    photo = {"name": "door.jpg", "mime": "image/jpeg", "data_b64": base64.b64encode(PHOTO).decode()}
    written = await human_writes(emulator, agent, text=SECRET, attachments=[photo])
    folder = tmp_path / "downloads"
    folder.mkdir()
    hass.config.allowlist_external_dirs = {str(folder)}
    await go_offline(emulator, agent)
    await call(hass, "send_message", {"text": "Water leak in the basement"})
    assert agent.runtime.status.queued_sends == 1
    code = shown_code(emulator, owner, "2")
    _user, token = await limited_user(hass)
    client = await hass_ws_client(hass, token)

    attempts = {
        "get_history": {},
        "get_status": {},
        "download_attachment": {"message_id": written["message_id"], "folder": str(folder)},
        "mark_processed": {"message_id": written["message_id"]},
        "clear_queue": {},
        # A guessed code: the refusal must not tell the right one.
        "trust_device": {"sender_device_id": "2", "verification_code": "0000"},
        "block_device": {"sender_device_id": "1"},
    }
    for service, data in attempts.items():
        response = service not in ("mark_processed",)
        message = refusal(await ws_call(client, service, data, response=response), "admin_required")
        assert f"pacerelle.{service}" in message
        assert SECRET not in message
        assert code.replace(" ", "") not in message.replace(" ", "")

    assert shown(agent, owner, "2").state is TrustState.UNVERIFIED
    assert shown(agent, owner, "1").state is TrustState.TRUSTED
    assert agent.runtime.status.queued_sends == 1
    pending = agent.runtime.agent.pending_requests()
    assert any(r.message_id == written["message_id"] for r in pending)
    assert list(folder.iterdir()) == []
    # An administrator still may (the same call, on the admin's own websocket).
    admin = await hass_ws_client(hass)
    answer = await ws_call(admin, "get_history", {})
    assert SECRET in json.dumps(answer["result"]["response"])


async def test_a_limited_user_sends_only_within_their_permissions(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    agent, _new_phone = await a_new_phone(hass, emulator)
    await add_camera(hass, "Bedroom")
    owner_notify = conversation_entity(hass, agent.entry, agent.conversation_id)
    assert owner_notify is not None
    # The Users group controls every entity, as Home Assistant's default policy says.
    _tablet, token = await limited_user(hass)
    tablet = await hass_ws_client(hass, token)
    # A user who may write to the owner's conversation, and see no camera.
    kid_policy = {"entities": {"entity_ids": {owner_notify: True}}}
    _kid, kid_token = await limited_user(hass, "Kid", kid_policy)
    kid = await hass_ws_client(hass, kid_token)
    # A user who may see the owner's conversation's entity, not write to it.
    _guest, guest_token = await limited_user(
        hass, "Guest", {"entities": {"entity_ids": {owner_notify: {"read": True}}}}
    )
    guest = await hass_ws_client(hass, guest_token)

    snapshot = {"text": "Look", "entity_id": owner_notify, "camera_snapshots": ["camera.bedroom"]}
    message = refusal(await ws_call(kid, "send_message", snapshot), "camera_not_allowed")
    assert "camera.bedroom" in message
    refusal(await ws_call(guest, "send_message", {"text": "Hi"}), "conversation_not_allowed")
    refusal(
        await ws_call(guest, "ask", {"kind": "confirm", "title": "Unlock?", "timeout": 1}),
        "conversation_not_allowed",
    )
    raw = {
        "conversation_id": {"conversation_id": agent.conversation_id},
        "to": {"to": agent.installed.owner_id},
        "source_message_id": {"source_message_id": agent.spoken},
        "attachments": {"attachments": ["/config/secrets.yaml"]},
    }
    for field, fields in raw.items():
        message = refusal(
            await ws_call(tablet, "send_message", {"text": "Hi", **fields}), "admin_fields"
        )
        assert field in message
    assert await emulator.inbox(agent.conversation_id) == []

    sent = await ws_call(kid, "send_message", {"text": "Home by six", "entity_id": owner_notify})
    assert sent["success"], sent
    snap = await ws_call(tablet, "send_message", snapshot)
    assert snap["success"], snap
    inbox = await emulator.wait_inbox(agent.conversation_id, 2)
    assert inbox[0]["text"] == "Home by six"
    snapped = json.loads(inbox[1]["text"])
    assert (snapped["text"], snapped["attachments"][0]["name"]) == ("Look", "bedroom.png")


async def test_the_llm_api_gives_a_limited_user_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle, hass_ws_client: WebSocketGenerator
) -> None:
    await setup_conversation(hass)
    agent, _new_phone = await a_new_phone(hass, emulator)
    await human_writes(emulator, agent, text=SECRET)
    user, token = await limited_user(hass)

    def read_history(_text: str, results: Results) -> list[llm.ToolInput] | str:
        if not results:
            return [llm.ToolInput("get_history", {})]
        return json.dumps([r.result.data for r in results], default=str)

    model_id, model = install_model(hass, read_history)
    client = await hass_ws_client(hass, token)
    await client.send_json_auto_id(
        {"type": "conversation/process", "text": "What did the owner write?", "agent_id": model_id}
    )
    answer = await client.receive_json()
    assert answer["success"], answer
    [result] = model.results
    assert result.tool_name == "get_history"
    assert result.result.error
    assert SECRET not in json.dumps(answer)
    assert SECRET not in json.dumps(result.result.data, default=str)

    # The same tool called on its own, in that user's context: refused, translated.
    own = llm.LLMContext(
        platform="test",
        context=Context(user_id=user.id),
        language="en",
        assistant="conversation",
        device_id=None,
    )
    api = await llm.async_get_api(hass, "pacerelle", own)
    assert api.tools == []
    tool_input = llm.ToolInput(tool_name="get_history", tool_args={})
    with pytest.raises(NotAllowed) as refused:
        await GetHistoryTool().async_call(hass, tool_input, own)
    assert refused.value.translation_key == "admin_required"
    # An administrator's model (no user, as an automation's) still reads it.
    admin_api = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    history = await admin_api.async_call_tool(tool_input)
    assert SECRET in json.dumps(history.data, default=str)
