"""A gateway conversation against the running emulator, with the reference Signal peer
as the agent and the emulator's human device on the other side."""

import asyncio
import base64
import json

import aiohttp
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.emulator.reference_agent import ReferenceAgent
from tests.helpers.emulator import EmulatorHandle, Installed


async def _online(emulator: EmulatorHandle) -> tuple[Installed, ReferenceAgent]:
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    await agent.connect()
    return installed, agent


async def test_encrypted_conversation_with_redelivery_until_acknowledged(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    # The user speaks first, while the agent is offline: the message waits in the queue.
    first_id = await emulator.send(installed.conversation_id, text="Turn on the lights")
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["queued"] == [first_id]
    assert (status["one_time_prekeys"], status["one_time_prekeys_handed_out"]) == (4, 1)

    await agent.connect()
    envelope = await agent.frame()
    assert envelope["type"] == "MSG"
    assert envelope["id"] == first_id
    assert envelope["from"] == installed.owner_id
    assert envelope["from_device_id"] == "1"
    assert envelope["to"] == installed.agent_id
    assert envelope["encrypted"] is True
    framed = base64.b64decode(envelope["payload_b64"])
    assert framed[0] == 1  # PreKeySignalMessage until the agent answers
    assert agent.open(envelope) == "Turn on the lights"

    # No ACK_READ: the message comes again on the next connection.
    await agent.ws.close()  # type: ignore[union-attr]
    await agent.connect()
    again = await agent.frame()
    assert again == envelope
    await agent.ack(again)
    reply_id = await agent.reply(again, "Lights are on")

    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert inbox[0]["message_id"] == reply_id
    assert inbox[0]["text"] == "Lights are on"
    assert inbox[0]["kind"] == "text"
    assert inbox[0]["device_id"] == "1"
    assert inbox[0]["reply_to_message_id"] == first_id
    assert inbox[0]["history"] == "valid"
    assert (await emulator.admin("GET", f"/agents/{installed.agent_id}"))["queued"] == []

    # Acknowledged: a reconnection brings nothing back; the next message is a plain one.
    await agent.ws.close()  # type: ignore[union-attr]
    await agent.connect()
    second_id = await emulator.send(installed.conversation_id, text="Thanks")
    second = await agent.frame()
    assert second["id"] == second_id
    assert base64.b64decode(second["payload_b64"])[0] == 2
    assert agent.open(second) == "Thanks"
    await agent.close()


async def test_each_device_has_its_own_session_and_gets_its_replies(
    emulator: EmulatorHandle,
) -> None:
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="from phone", device_id="phone")
    await emulator.send(installed.conversation_id, text="from laptop", device_id="laptop")
    phone, laptop = await agent.frame(), await agent.frame()
    assert (agent.open(phone), agent.open(laptop)) == ("from phone", "from laptop")
    assert base64.b64decode(laptop["payload_b64"])[0] == 1
    await agent.reply(laptop, "to laptop")
    await agent.reply(phone, "to phone")
    inbox = await emulator.wait_inbox(installed.conversation_id, 2)
    assert [(item["device_id"], item["text"]) for item in inbox] == [
        ("laptop", "to laptop"),
        ("phone", "to phone"),
    ]
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["one_time_prekeys_handed_out"] == 2
    await agent.close()


async def test_widgets_files_and_unencrypted_messages(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="hi")
    hello = await agent.frame()
    agent.open(hello)
    widget = {
        "type": "widget.standard",
        "id": "w1",
        "v": 1,
        "kind": "confirm",
        "spec": {"title": "Open the garage?"},
    }
    await agent.reply(hello, json.dumps(widget))
    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert inbox[0]["kind"] == "widget.standard"
    assert inbox[0]["payload"] == widget

    await emulator.send(installed.conversation_id, widget_response={"ref": "w1", "value": True})
    answer = json.loads(agent.open(await agent.frame()))
    assert (answer["type"], answer["ref"], answer["value"]) == ("widget.response", "w1", True)

    picture = b"\x89PNG fake picture"
    await emulator.send(
        installed.conversation_id,
        text="look",
        attachments=[
            {"name": "cat.png", "mime": "image/png", "data_b64": base64.b64encode(picture).decode()}
        ],
    )
    with_file = await agent.frame()
    public = with_file["attachments"][0]
    assert (public["name"], public["mime"], public["size"]) == (
        "attachment",
        "application/octet-stream",
        len(picture),
    )
    secret = json.loads(agent.open(with_file))["attachments"][0]
    assert (secret["name"], secret["mime"]) == ("cat.png", "image/png")
    async with emulator.session.get(
        f"{emulator.base_url}/agent/blobs/{public['blob_id']}",
        headers={"Authorization": f"Bearer {agent.token}"},
    ) as response:
        ciphertext = await response.read()

    key, iv = base64.b64decode(secret["key_b64"]), base64.b64decode(secret["iv_b64"])
    assert AESGCM(key).decrypt(iv, ciphertext, None) == picture

    await emulator.send(installed.conversation_id, text="debug", encrypted=False)
    plain = await agent.frame()
    assert plain["encrypted"] is False
    assert base64.b64decode(plain["payload_b64"]) == b"debug"
    await agent.close()


async def test_agent_files_reach_the_human_decrypted(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="send me the report")
    request = await agent.frame()
    agent.open(request)
    key, iv = AESGCM.generate_key(bit_length=256), b"\x01" * 12
    async with emulator.session.post(
        f"{emulator.base_url}/agent/blobs",
        data=AESGCM(key).encrypt(iv, b"report body", None),
        headers={
            "Authorization": f"Bearer {agent.token}",
            "Content-Type": "application/octet-stream",
        },
    ) as response:
        assert response.status == 201
        blob = await response.json()
    secret = {
        "id": "a1",
        "blob_id": blob["id"],
        "key_b64": base64.b64encode(key).decode(),
        "iv_b64": base64.b64encode(iv).decode(),
        "name": "report.txt",
        "mime": "text/plain",
        "size": 11,
    }
    await agent.reply(
        request,
        json.dumps({"kind": "chat.message", "text": "here", "attachments": [secret]}),
        attachments=[
            {
                "id": "a1",
                "name": "attachment",
                "mime": "application/octet-stream",
                "size": 11,
                "blob_id": blob["id"],
            }
        ],
    )
    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert inbox[0]["kind"] == "chat.message"
    assert base64.b64decode(inbox[0]["files"][0]["content_b64"]) == b"report body"
    await agent.close()


async def test_bad_frames_are_refused_without_closing(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    assert agent.ws is not None
    await agent.ws.send_str("not json")
    assert (await agent.frame())["type"] == "ERROR"
    await agent.ws.send_str("[1, 2]")
    assert (await agent.frame())["type"] == "ERROR"
    await agent.ws.send_json({"type": "SOMETHING_NEW", "x": 1})  # ignored, no answer
    await agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m1",
            "conversation_id": "conv_other",
            "to": installed.owner_id,
            "payload_b64": "aGk=",
            "encrypted": False,
        }
    )
    refused = await agent.frame()
    assert refused == {
        "type": "ERROR",
        "error": "the agent is not a member of this conversation",
        "message_id": "m1",
    }
    await agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m2",
            "conversation_id": installed.conversation_id,
            "to": "usr_someone_else",
            "payload_b64": "aGk=",
            "encrypted": False,
        }
    )
    assert (await agent.frame())["message_id"] == "m2"
    await agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m3",
            "conversation_id": installed.conversation_id,
            "to": installed.owner_id,
            "payload_b64": "aGk=",
            "encrypted": False,
        }
    )
    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert [(item["message_id"], item["text"], item["encrypted"]) for item in inbox] == [
        ("m3", "hi", False)
    ]
    await agent.ws.send_str("[" * 100_000)  # deeper than any JSON parser goes
    assert (await agent.frame())["type"] == "ERROR"
    odd = json.dumps({"kind": "chat.message", "text": "x", "attachments": 5})
    await agent.ws.send_json(
        {
            "type": "MSG",
            "id": "m4",
            "conversation_id": installed.conversation_id,
            "to": installed.owner_id,
            "payload_b64": base64.b64encode(odd.encode()).decode(),
            "encrypted": False,
        }
    )
    inbox = await emulator.wait_inbox(installed.conversation_id, 2)
    assert (inbox[1]["kind"], inbox[1]["files"]) == ("chat.message", [])
    kinds = [event["kind"] for event in await emulator.admin("GET", "/events")]
    assert "ignored_frame" in kinds
    await agent.close()


async def test_oversized_frames_close_the_connection_only(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    assert agent.ws is not None
    await agent.ws.send_str("x" * (1024 * 1024 + 1))
    closing = await agent.ws.receive(timeout=5)
    assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert agent.ws.close_code == 1009
    await agent.connect()  # the server is fine
    await emulator.send(installed.conversation_id, text="still here")
    assert agent.open(await agent.frame()) == "still here"
    await agent.close()


async def test_connection_closes_when_its_token_expires(emulator: EmulatorHandle) -> None:
    _, agent = await _online(emulator)
    await emulator.advance_clock(899)
    await emulator.advance_clock(1)
    assert agent.ws is not None
    message = await agent.ws.receive(timeout=5)
    assert message.type is aiohttp.WSMsgType.CLOSE
    assert agent.ws.close_code == 4401
    await agent.close()


async def test_revocation_closes_the_connection(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    await emulator.admin("POST", f"/installations/{installed.agent_id}/revoke")
    assert agent.ws is not None
    await agent.ws.receive(timeout=5)
    assert agent.ws.close_code == 4403
    with pytest.raises(Exception, match="409"):
        await emulator.send(installed.conversation_id, text="anyone?")
    await agent.close()


async def test_a_newer_connection_replaces_the_older(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    older = agent.ws
    assert older is not None
    await agent.connect()
    await older.receive(timeout=5)
    assert older.close_code == 4000
    await emulator.send(installed.conversation_id, text="to the newest")
    assert agent.open(await agent.frame()) == "to the newest"
    await agent.close()


async def test_faults_drop_inject_and_refuse(emulator: EmulatorHandle) -> None:
    _, agent = await _online(emulator)
    injected = await emulator.faults(inject_frames=['{"type": "MSG", "id": 5}', "garbage"])
    assert injected["injected"] == 2
    assert (await agent.frame()) == {"type": "MSG", "id": 5}
    assert agent.ws is not None
    assert (await agent.ws.receive(timeout=5)).data == "garbage"

    dropped = await emulator.faults(drop_connections="abort")
    assert dropped["dropped"] == 1
    message = await agent.ws.receive(timeout=5)
    assert message.type in (
        aiohttp.WSMsgType.CLOSE,
        aiohttp.WSMsgType.CLOSED,
        aiohttp.WSMsgType.ERROR,
    )

    await emulator.faults(gateway_status=503)
    with pytest.raises(aiohttp.WSServerHandshakeError) as err:
        await agent.connect()
    assert err.value.status == 503
    await emulator.faults(reset=True, delay_ms=50)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await agent.connect()
    assert loop.time() - started >= 0.05
    await emulator.faults(reset=True)
    await agent.close()


async def test_a_reset_device_announces_a_new_identity(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    conversation = installed.conversation_id
    await emulator.send(conversation, text="one", device_id="phone")
    first = await agent.frame()
    assert agent.open(first) == "one"
    await agent.ack(first)
    await emulator.admin("POST", f"/conversations/{conversation}/devices/phone/reset")
    assert await agent.frame() == {"type": "IDENTITY_CHANGED", "user_id": installed.owner_id}
    await emulator.send(conversation, text="two", device_id="phone")
    second = await agent.frame()
    assert base64.b64decode(second["payload_b64"])[0] == 1  # a new session from scratch
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["one_time_prekeys_handed_out"] == 2
    await agent.close()


async def test_group_keys_are_served_to_their_agent_only(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    envelope = {
        "conversation_id": "conv_group",
        "key_id": "k1",
        "epoch": 1,
        "sender_id": "usr_bob",
        "envelope_b64": "AQID",
    }
    await emulator.admin("POST", "/group-keys", {**envelope, "agent_id": installed.agent_id})
    headers = {"Authorization": f"Bearer {agent.token}"}
    url = f"{emulator.base_url}/agent/group-keys?conversation_id="
    async with emulator.session.get(url + "conv_group", headers=headers) as response:
        assert await response.json() == [envelope]
    async with emulator.session.get(url + installed.conversation_id, headers=headers) as response:
        assert await response.json() == []
    async with emulator.session.get(url + "conv_elsewhere", headers=headers) as response:
        assert response.status == 403
    await agent.close()


async def test_expiring_every_token_and_clean_drops(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    dropped = await emulator.faults(drop_connections=True)
    assert dropped["dropped"] == 1
    assert agent.ws is not None
    await agent.ws.receive(timeout=5)
    assert agent.ws.close_code == 1012
    await agent.connect()
    await emulator.faults(expire_runtime_tokens=True)
    await agent.ws.receive(timeout=5)
    assert agent.ws.close_code == 4401
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await agent.connect()
    agent.token = await emulator.runtime_token(installed.installation_token)
    await agent.connect()
    await agent.close()


async def test_an_agent_with_a_new_identity_gets_a_new_session(emulator: EmulatorHandle) -> None:
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="to the old identity")
    old = await agent.frame()
    assert agent.open(old) == "to the old identity"
    await agent.ack(old)
    await agent.close()

    # The agent lost its store and starts over: new identity, new prekeys.
    reborn = await emulator.agent(installed)
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["one_time_prekeys"] == 5  # the old identity's prekeys were discarded
    await reborn.connect()
    await emulator.send(installed.conversation_id, text="to the new identity")
    new = await reborn.frame()
    assert base64.b64decode(new["payload_b64"])[0] == 1
    assert reborn.open(new) == "to the new identity"
    await reborn.reply(new, "hello again")
    inbox = await emulator.wait_inbox(installed.conversation_id, 1)
    assert inbox[0]["text"] == "hello again"
    await reborn.close()


async def test_a_relay_close_drops_the_frames_in_flight(emulator: EmulatorHandle) -> None:
    """A close the relay starts reads nothing more of the agent's (README, Gateway): a
    MSG written before its close frame reached the agent is kept, one written after it
    (in flight, the agent not yet answering the close) is dropped, never delivered."""
    installed, agent = await _online(emulator)
    await emulator.send(installed.conversation_id, text="Anyone home?")
    envelope = await agent.frame()
    agent.open(envelope)
    await agent.ack(envelope)
    assert agent.ws is not None
    await agent.ws.close()
    url = agent.base_url.replace("http", "ws", 1) + f"/ws/agent?token={agent.token}"
    agent.ws = await agent.session.ws_connect(url, autoclose=False)  # answers the close late
    kept = await agent.reply(envelope, "Written before the close")
    await emulator.wait_inbox(installed.conversation_id, 1)

    dropping = asyncio.create_task(emulator.faults(drop_connections="close"))
    message = await agent.ws.receive(timeout=5)
    assert message.type is aiohttp.WSMsgType.CLOSE
    lost = await agent.reply(envelope, "Written after the close left the relay")
    await agent.ws.close()  # the agent's close: the relay has read everything before it
    assert (await dropping)["dropped"] == 1

    inbox = await emulator.inbox(installed.conversation_id)
    assert [entry["message_id"] for entry in inbox] == [kept]
    sent = [e["message_id"] for e in await emulator.admin("GET", "/events?kind=agent_sent")]
    assert lost not in sent
    await agent.close()
