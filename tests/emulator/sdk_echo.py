"""Pacerelle's own Python SDK, unchanged, as the emulator's tests run it: loaded from the
unzipped wheel, installed through Agent Connect, an echo agent in a thread of its own,
stopped by the relay."""

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


def load_sdk() -> ModuleType:
    """The SDK from its unzipped wheel (metadata folder included), imported once."""
    if "agent_gateway_sdk" not in sys.modules:
        sys.path.insert(0, str(SDK_DIR))
        try:
            importlib.import_module("agent_gateway_sdk")
        finally:
            sys.path.remove(str(SDK_DIR))
    return sys.modules["agent_gateway_sdk"]


async def runtime_token(emulator: EmulatorHandle, sdk: ModuleType, installation_token: str) -> Any:
    """A runtime token for the installation, as the SDK asks for it."""
    return await asyncio.to_thread(
        sdk.request_agent_runtime_token,
        installation_token=installation_token,
        base_url=emulator.base_url,
    )


async def sdk_installs(emulator: EmulatorHandle, sdk: ModuleType) -> tuple[Any, Any]:
    """Agent Connect as the SDK runs it, the user approving in the emulator (the state comes
    back unchanged); the installation and a first runtime token."""
    client_id = await emulator.register_client()
    start = await asyncio.to_thread(
        sdk.begin_agent_connect,
        connect_key=await emulator.connect_key(),
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
    return installation, await runtime_token(emulator, sdk, installation.installation_token)


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


async def stop_echo(emulator: EmulatorHandle, agent: EchoAgent, agent_id: str) -> None:
    """The relay closes the SDK's connection; its thread ends, having reported no error."""
    await emulator.emulator.hub.close_agent(agent_id, 1000, "test over")
    await asyncio.to_thread(agent.thread.join, 10)
    assert not agent.thread.is_alive()
    assert agent.errors == []
