"""Pacerelle's own Python SDK, unchanged, against the emulator: Agent Connect and an
end-to-end encrypted echo agent answering the emulator's human device."""

import asyncio
import importlib
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.helpers.emulator import REDIRECT_URI, EmulatorHandle

PEER_DIR = Path(__file__).resolve().parents[2] / ".venv/reference-peer"
SDK_DIR = PEER_DIR / "sdk"
NATIVE_LIBRARY = PEER_DIR / "libsignalwrap.so"


def _load_sdk() -> ModuleType:
    """The SDK from its unzipped wheel (metadata folder included), imported once."""
    if "agent_gateway_sdk" not in sys.modules:
        sys.path.insert(0, str(SDK_DIR))
        try:
            importlib.import_module("agent_gateway_sdk")
        finally:
            sys.path.remove(str(SDK_DIR))
    return sys.modules["agent_gateway_sdk"]


class EchoAgent:
    """The SDK's AgentGatewayClient in its own thread and event loop, as an SDK user runs it
    (its HTTP calls block, so it cannot share the emulator's loop)."""

    def __init__(self, sdk: ModuleType, base_url: str, runtime: Any, store_root: Path) -> None:
        self.errors: list[BaseException] = []
        self._options = {
            "token": runtime.agent_token,
            "agent_id": runtime.agent_id,
            "base_url": base_url,
            "e2ee": True,
            "signal_library_path": NATIVE_LIBRARY,
            "store_root": store_root,
        }
        self._sdk = sdk
        self.thread = threading.Thread(target=self._run, name="sdk-echo-agent")

    @staticmethod
    async def _echo(message: Any, client: Any) -> None:
        await client.reply(message, f"echo: {message.text}")

    def _run(self) -> None:
        # The SDK's SQLite store belongs to the thread that opens it.
        client = self._sdk.AgentGatewayClient(**self._options)
        client.on_message(self._echo)
        try:
            asyncio.run(client.connect())
        except BaseException as err:  # reported by the test
            self.errors.append(err)
        finally:
            client.close()


async def test_the_sdk_connects_and_answers_the_human_device(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    sdk = _load_sdk()
    client_id = await emulator.register_client()
    key = await emulator.connect_key()
    start = await asyncio.to_thread(
        sdk.begin_agent_connect,
        connect_key=key,
        client_id=client_id,
        redirect_uri=REDIRECT_URI,
        agent_name="SDK echo",
        agent_description="Answers with what it got.",
        base_url=emulator.base_url,
    )
    approved = await emulator.admin("POST", f"/requests/{start.request_id}/approve")
    query = parse_qs(urlsplit(approved["redirect_url"]).query)
    assert query["state"] == [start.state]
    installation = await asyncio.to_thread(
        sdk.exchange_agent_connect_code,
        code=query["code"][0],
        code_verifier=start.code_verifier,
        client_id=client_id,
        redirect_uri=REDIRECT_URI,
        base_url=emulator.base_url,
    )
    runtime = await asyncio.to_thread(
        sdk.request_agent_runtime_token,
        installation_token=installation.installation_token,
        base_url=emulator.base_url,
    )
    assert runtime.expires_in == 900
    assert runtime.conversation_id == installation.conversation_id

    agent = EchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        status = await emulator.wait_agent(runtime.agent_id, lambda status: status["connected"])
        assert status["one_time_prekeys"] == 50
        assert status["protocol_features"] == ["history-v1"]
        identity_key = status["identity_key"]

        conversation = installation.conversation_id
        await emulator.send(conversation, text="hello")
        await emulator.send(conversation, text="again", device_id="tablet")
        await emulator.send(conversation, text="once more")
        inbox = await emulator.wait_inbox(conversation, 3)
        # Each answer goes back to, and is decrypted by, the device that asked.
        assert sorted((item["device_id"], item["text"]) for item in inbox) == [
            ("1", "echo: hello"),
            ("1", "echo: once more"),
            ("tablet", "echo: again"),
        ]
        assert all(item["encrypted"] and item["history"] == "valid" for item in inbox)
        assert {item["frame_type"] for item in inbox} == {2}
        # Every message was acknowledged once handled.
        await emulator.wait_agent(runtime.agent_id, lambda status: not status["queued"])
    finally:
        await _stop(emulator, agent, runtime.agent_id)

    # Offline, a message waits; the restarted SDK (same store, new token) answers it.
    waiting_id = await emulator.send(conversation, text="while you were away")
    runtime = await asyncio.to_thread(
        sdk.request_agent_runtime_token,
        installation_token=installation.installation_token,
        base_url=emulator.base_url,
    )
    agent = EchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        inbox = await emulator.wait_inbox(conversation, 4)
        assert inbox[3]["text"] == "echo: while you were away"
        assert inbox[3]["reply_to_message_id"] == waiting_id
        status = await emulator.wait_agent(runtime.agent_id, lambda status: not status["queued"])
        assert status["identity_key"] == identity_key
    finally:
        await _stop(emulator, agent, runtime.agent_id)


async def _stop(emulator: EmulatorHandle, agent: EchoAgent, agent_id: str) -> None:
    await emulator.emulator.hub.close_agent(agent_id, 1000, "test over")
    await asyncio.to_thread(agent.thread.join, 10)
    assert not agent.thread.is_alive()
    assert agent.errors == []
