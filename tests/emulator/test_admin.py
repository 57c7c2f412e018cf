"""The admin API's own rules, the chat page and its timeline."""

import json

import pytest

from tests.helpers.emulator import AdminError, EmulatorHandle


async def test_chat_page_and_its_assets_are_served(emulator: EmulatorHandle) -> None:
    for path, kind in (
        ("/", "text/html"),
        ("/_emulator/static/chat.js", "javascript"),
        ("/_emulator/static/chat.css", "text/css"),
    ):
        async with emulator.session.get(emulator.base_url + path) as response:
            assert response.status == 200
            assert kind in response.headers["Content-Type"]
            assert len(await response.text()) > 100


async def test_timeline_merges_what_was_sent_and_received(emulator: EmulatorHandle) -> None:
    installed = await emulator.install(user_id="usr_alice", name="Kitchen")
    agent = await emulator.agent(installed)
    await agent.connect()
    await emulator.send(installed.conversation_id, text="hi", device_id="web")
    hello = await agent.frame()
    agent.open(hello)
    widget = {
        "type": "widget.standard",
        "id": "w",
        "v": 1,
        "kind": "choice",
        "spec": {"title": "Which?", "options": [{"id": "a", "label": "A"}]},
    }
    await agent.reply(hello, json.dumps(widget))
    await emulator.wait_inbox(installed.conversation_id, 1)
    await emulator.send(installed.conversation_id, widget_response={"ref": "w", "value": "a"})
    timeline = await emulator.admin("GET", f"/conversations/{installed.conversation_id}/timeline")
    assert timeline["installation"]["owner_id"] == "usr_alice"
    assert timeline["installation"]["installation_token"] is None
    assert [(item["direction"], item["kind"]) for item in timeline["items"]] == [
        ("out", "text"),
        ("in", "widget.standard"),
        ("out", "widget.response"),
    ]
    await agent.close()


async def test_admin_refusals(emulator: EmulatorHandle) -> None:
    cases = [
        ("POST", "/requests/req_unknown/approve", None, 404),
        ("POST", "/conversations/conv_unknown/send", {"text": "x"}, 404),
        ("GET", "/conversations/conv_unknown/inbox", None, 404),
        ("GET", "/agents/agt_unknown", None, 404),
        ("POST", "/installations/agt_unknown/revoke", None, 404),
        ("POST", "/clock", {"advance_seconds": -1}, 400),
        ("POST", "/faults", {"delay_ms": -5}, 400),
        ("POST", "/faults", {"runtime_token_status": 99}, 400),
        ("POST", "/faults", {"inject_frames": "not a list"}, 400),
        ("POST", "/connect-keys", {"user_id": "a:b"}, 400),
    ]
    for method, path, body, status in cases:
        with pytest.raises(AdminError) as err:
            await emulator.admin(method, path, body)
        assert err.value.status == status, path
        assert isinstance(err.value.body["error"], str)


async def test_send_needs_content_and_published_keys(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    with pytest.raises(AdminError) as err:
        await emulator.send(installed.conversation_id, text="before keys")
    assert err.value.status == 409
    await emulator.agent(installed)
    with pytest.raises(AdminError) as err:
        await emulator.send(installed.conversation_id)
    assert err.value.status == 400


async def test_route_faults_and_reset(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    await emulator.faults(route_status={"/agent/prekey-bundle": 503})
    with pytest.raises(Exception, match="503"):
        await emulator.agent(installed)
    current = await emulator.admin("GET", "/faults")
    assert current["route_status"] == {"/agent/prekey-bundle": 503}
    await emulator.faults(reset=True)
    assert (await emulator.admin("GET", "/faults"))["route_status"] == {}
    await emulator.agent(installed)
