"""Home Assistant driven over its HTTP and WebSocket APIs, as the frontend would.

`onboard` creates the owner through the onboarding API and returns a long-lived access
token (saved to disk before it returns, so it survives a SIGKILL). `add_pacerelle` runs the
config flow through the REST flow API, approves in the emulator (admin API) and follows the
OAuth callback URL it returns, like the browser would.
"""

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from tests.helpers.emulator import EmulatorHandle

PASSWORD = "system-test-password"
FLOW_PATH = "/api/config/config_entries/flow"
# The frontend sends its own URL with flow steps; the OAuth2 callback URL is built from it.
HEADER_FRONTEND_BASE = "HA-Frontend-Base"
SAVE_TIMEOUT = 10.0
WAIT_TIMEOUT = 30.0


class HomeAssistantApi:
    """REST calls with a bearer token; `socket()` for the WebSocket API."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.session = session
        self.base_url = base_url
        self.token = token

    @classmethod
    async def onboard(
        cls, session: aiohttp.ClientSession, base_url: str, config_dir: Path
    ) -> HomeAssistantApi:
        client_id = f"{base_url}/"
        user = {
            "client_id": client_id,
            "name": "System Test",
            "username": "system",
            "password": PASSWORD,
            "language": "en",
        }
        async with session.post(f"{base_url}/api/onboarding/users", json=user) as response:
            assert response.status == 200, await response.text()
            auth_code = (await response.json())["auth_code"]
        form = {"grant_type": "authorization_code", "code": auth_code, "client_id": client_id}
        async with session.post(f"{base_url}/auth/token", data=form) as response:
            assert response.status == 200, await response.text()
            access_token = (await response.json())["access_token"]
        api = cls(session, base_url, access_token)
        async with api.socket() as socket:
            api.token = await socket.command(
                "auth/long_lived_access_token", client_name="system test", lifespan=1
            )
        # The auth store saves after a delay: wait for it, a SIGKILL must not lose the token.
        auth_file = config_dir / ".storage" / "auth"
        await wait_for(
            lambda: auth_file.exists() and "long_lived_access_token" in auth_file.read_text(),
            SAVE_TIMEOUT,
            "the long-lived token saved",
        )
        return api

    async def rest(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        expect: int = 200,
    ) -> Any:
        all_headers = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        async with self.session.request(
            method, self.base_url + path, json=body, headers=all_headers
        ) as response:
            text = await response.text()
            assert response.status == expect, f"{method} {path}: {response.status} {text}"
            return json.loads(text) if text else None

    async def call_service(self, domain: str, service: str, data: dict[str, Any]) -> Any:
        return await self.rest("POST", f"/api/services/{domain}/{service}", data)

    async def entries(self, domain: str = "pacerelle") -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = await self.rest(
            "GET", f"/api/config/config_entries/entry?domain={domain}"
        )
        return entries

    async def wait_entry_state(
        self, entry_id: str, state: str, within: float = WAIT_TIMEOUT
    ) -> dict[str, Any]:
        async with asyncio.timeout(within):
            while True:
                for entry in await self.entries():
                    if entry["entry_id"] == entry_id and entry["state"] == state:
                        return entry
                await asyncio.sleep(0.1)

    async def add_pacerelle(
        self, emulator: EmulatorHandle, name: str, user_id: str | None = None
    ) -> dict[str, Any]:
        """The whole config flow: key (of `user_id`'s account), approval, OAuth callback, entry."""
        frontend = {HEADER_FRONTEND_BASE: self.base_url}
        flow = await self.rest("POST", FLOW_PATH, {"handler": "pacerelle"}, headers=frontend)
        assert flow["type"] == "form", flow
        # As the frontend does: the folded section is sent with the defaults it shows.
        [advanced] = [field for field in flow["data_schema"] if field["name"] == "advanced"]
        server_url = {field["name"]: field.get("default") for field in advanced["schema"]}
        assert server_url == {"server_url": emulator.base_url}, "not the development default"
        user_input = {
            "connection_key": await emulator.connect_key(user_id),
            "agent_name": name,
            "advanced": server_url,
        }
        step = await self.rest(
            "POST", f"{FLOW_PATH}/{flow['flow_id']}", user_input, headers=frontend
        )
        assert step["type"] == "external", step
        request_id = parse_qs(urlsplit(step["url"]).query)["request_id"][0]
        approval = await emulator.admin("POST", f"/requests/{request_id}/approve")
        # Pacerelle's redirect: the browser lands on Home Assistant's OAuth2 callback.
        async with self.session.get(approval["redirect_url"]) as response:
            assert response.status == 200, await response.text()
        done = await self.rest("POST", f"{FLOW_PATH}/{flow['flow_id']}", {}, headers=frontend)
        assert done["type"] == "create_entry", done
        entry: dict[str, Any] = done["result"]
        return entry

    @asynccontextmanager
    async def socket(self) -> AsyncIterator[HomeAssistantSocket]:
        url = self.base_url.replace("http", "ws", 1) + "/api/websocket"
        async with self.session.ws_connect(url, max_msg_size=0) as ws:
            assert (await ws.receive_json())["type"] == "auth_required"
            await ws.send_json({"type": "auth", "access_token": self.token})
            reply = await ws.receive_json()
            assert reply["type"] == "auth_ok", reply
            socket = HomeAssistantSocket(ws)
            reader = asyncio.create_task(socket.read())
            try:
                yield socket
            finally:
                reader.cancel()
                with suppress(asyncio.CancelledError):
                    await reader


class HomeAssistantSocket:
    """Commands answered by id; subscribed events go to queues."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._results: dict[int, asyncio.Future[Any]] = {}
        self._events: dict[int, asyncio.Queue[dict[str, Any]]] = {}

    async def read(self) -> None:
        async for message in self.ws:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            for item in _messages(json.loads(message.data)):
                if item["type"] == "event" and item["id"] in self._events:
                    self._events[item["id"]].put_nowait(item["event"])
                elif item["type"] == "result" and item["id"] in self._results:
                    future = self._results.pop(item["id"])
                    if item["success"]:
                        future.set_result(item.get("result"))
                    else:
                        future.set_exception(AssertionError(f"command failed: {item['error']}"))
        for future in self._results.values():
            future.set_exception(AssertionError("the WebSocket closed"))

    async def command(self, command_type: str, **fields: Any) -> Any:
        command_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._results[command_id] = future
        await self.ws.send_json({"id": command_id, "type": command_type, **fields})
        async with asyncio.timeout(WAIT_TIMEOUT):
            return await future

    async def subscribe(self, event_type: str) -> asyncio.Queue[dict[str, Any]]:
        """Events of that type from now on, each `{event_type, data, time_fired, ...}`."""
        return await self.subscribe_to("subscribe_events", event_type=event_type)

    async def subscribe_to(self, command_type: str, **fields: Any) -> asyncio.Queue[dict[str, Any]]:
        """What a subscription command (`backup/subscribe_events`, say) sends from now on."""
        command_id = next(self._ids)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._events[command_id] = queue
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._results[command_id] = future
        await self.ws.send_json({"id": command_id, "type": command_type, **fields})
        await future
        return queue


def _messages(decoded: Any) -> list[dict[str, Any]]:
    # Home Assistant coalesces messages into a JSON list when it has several to send.
    return decoded if isinstance(decoded, list) else [decoded]


async def wait_for(
    condition: Callable[[], bool], within: float, what: str, *, every: float = 0.05
) -> None:
    """Until `condition()` holds, looked at `every` seconds, at most `within` seconds."""
    try:
        async with asyncio.timeout(within):
            while True:
                if condition():
                    return
                await asyncio.sleep(every)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def read_event_log(path: Path) -> list[dict[str, Any]]:
    """The events the test-only component recorded (an unfinished last line is ignored)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        with suppress(json.JSONDecodeError):
            records.append(json.loads(line))
    return records
