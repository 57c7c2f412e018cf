"""The agent gateway: one WebSocket per agent, a queue per agent, ACK_READ to dequeue."""

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

from .agent_api import authenticate_agent
from .agent_connect import iso_time
from .context import Emulator, emulator_of
from .gateway_frames import FrameError, check_ack, check_agent_message
from .groups import check_agent_group_message, deliver_from_agent, group_of
from .http_util import ApiError, json_error
from .state import Installation, Json

_LOGGER = logging.getLogger(__name__)

# Private-use close codes (4000-4999), chosen by the emulator.
CLOSE_REPLACED = 4000
CLOSE_TOKEN_EXPIRED = 4401
CLOSE_REVOKED = 4403
CLOSE_DROPPED = 1012  # "service restart"
CLOSE_SHUTDOWN = 1001


@dataclass
class AgentConnection:
    agent_id: str
    ws: web.WebSocketResponse
    transport: asyncio.BaseTransport | None
    token_expires_at: float
    # Serializes sends so that the backlog goes out before live messages.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send(self, frame: str) -> bool:
        async with self.lock:
            if self.ws.closed:
                return False
            try:
                await self.ws.send_str(frame)
            except ConnectionError:
                return False
            return True


class GatewayHub:
    """The live connections, and delivery of queued messages to them."""

    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator
        self.connections: dict[str, AgentConnection] = {}

    def is_connected(self, agent_id: str) -> bool:
        return agent_id in self.connections

    async def enqueue(self, agent_id: str, envelope: Json) -> None:
        """Queue a message for the agent (durably), then push it if the agent is online.

        The relay stamps it with the time it took it (`created_at`), as a relay may.
        """
        envelope.setdefault("created_at", iso_time(self._emulator.now()))
        self._emulator.state.queues.setdefault(agent_id, []).append(envelope)
        self._emulator.commit()
        connection = self.connections.get(agent_id)
        if connection is not None and await connection.send(json.dumps(envelope)):
            self._emulator.record("delivered", agent_id=agent_id, message_id=envelope["id"])

    async def notify(self, agent_id: str, frame: Json) -> bool:
        """A notice for the agent if it is online; notices are never queued."""
        connection = self.connections.get(agent_id)
        return connection is not None and await connection.send(json.dumps(frame))

    async def close_agent(self, agent_id: str, code: int, reason: str) -> None:
        connection = self.connections.pop(agent_id, None)
        if connection is not None:
            await connection.ws.close(code=code, message=reason.encode())

    async def drop_all(self, *, abort: bool) -> int:
        """Drop every connection: a clean close, or a dead TCP link without close frame."""
        connections = list(self.connections.values())
        self.connections.clear()
        for connection in connections:
            if abort and isinstance(connection.transport, asyncio.Transport):
                connection.transport.abort()
            else:
                await connection.ws.close(code=CLOSE_DROPPED, message=b"dropped by a fault")
        return len(connections)

    async def inject(self, agent_id: str | None, frames: list[str]) -> int:
        sent = 0
        for connection in list(self.connections.values()):
            if agent_id is not None and connection.agent_id != agent_id:
                continue
            for frame in frames:
                sent += await connection.send(frame)
        return sent

    async def shutdown(self) -> None:
        for agent_id in list(self.connections):
            await self.close_agent(agent_id, CLOSE_SHUTDOWN, "server shutdown")

    async def attach(self, connection: AgentConnection) -> None:
        """Make `connection` the agent's connection and send it everything unacknowledged."""
        previous = self.connections.get(connection.agent_id)
        async with connection.lock:
            # No await between registering and the snapshot: nothing is sent twice or lost.
            self.connections[connection.agent_id] = connection
            backlog = list(self._emulator.state.queues.get(connection.agent_id, []))
            with contextlib.suppress(ConnectionError):
                for envelope in backlog:
                    await connection.ws.send_str(json.dumps(envelope))
        if previous is not None and previous is not connection:
            await previous.ws.close(code=CLOSE_REPLACED, message=b"replaced by a newer connection")
        self._emulator.record("agent_connected", agent_id=connection.agent_id, backlog=len(backlog))

    def detach(self, connection: AgentConnection) -> None:
        if self.connections.get(connection.agent_id) is connection:
            del self.connections[connection.agent_id]


async def _expire(emulator: Emulator, connection: AgentConnection) -> None:
    await emulator.clock.sleep_until(connection.token_expires_at)
    emulator.record("token_expired_on_gateway", agent_id=connection.agent_id)
    emulator.hub.detach(connection)
    await connection.ws.close(code=CLOSE_TOKEN_EXPIRED, message=b"runtime token expired")


async def _error(connection: AgentConnection, message: str, message_id: object = None) -> None:
    frame: Json = {"type": "ERROR", "error": message}
    if isinstance(message_id, str):
        frame["message_id"] = message_id
    await connection.send(json.dumps(frame))


async def _handle_text(
    emulator: Emulator, installation: Installation, connection: AgentConnection, text: str
) -> None:
    try:
        frame = json.loads(text)
    except json.JSONDecodeError, RecursionError:
        emulator.record("rejected_frame", agent_id=installation.agent_id, error="not JSON")
        await _error(connection, "the frame is not JSON")
        return
    if not isinstance(frame, dict):
        emulator.record("rejected_frame", agent_id=installation.agent_id, error="not an object")
        await _error(connection, "the frame is not a JSON object")
        return
    kind = frame.get("type")
    try:
        if kind == "ACK_READ":
            _acknowledge(emulator, installation, frame)
        elif kind == "MSG" and (group := group_of(emulator, str(frame.get("conversation_id")))):
            envelope = check_agent_group_message(group, installation, frame)
            deliver_from_agent(emulator, group, envelope)
        elif kind == "MSG":
            envelope = check_agent_message(installation, frame)
            await emulator.humans.deliver_from_agent(installation, envelope)
        else:
            emulator.record("ignored_frame", agent_id=installation.agent_id, type=str(kind))
    except FrameError as err:
        emulator.record(
            "rejected_frame", agent_id=installation.agent_id, type=str(kind), error=str(err)
        )
        await _error(connection, str(err), frame.get("id") or frame.get("message_id"))


def _acknowledge(emulator: Emulator, installation: Installation, frame: Json) -> None:
    queue = emulator.state.queues.get(installation.agent_id, [])
    message_id = check_ack(frame)
    for index, envelope in enumerate(queue):
        if envelope["id"] != message_id:
            continue
        if frame.get("conversation_id") != envelope["conversation_id"] or frame.get(
            "to"
        ) != envelope.get("from"):
            raise FrameError("ACK_READ does not match the message's conversation and sender")
        del queue[index]
        emulator.commit()
        emulator.record("acknowledged", agent_id=installation.agent_id, message_id=message_id)
        return
    emulator.record("stale_ack", agent_id=installation.agent_id, message_id=message_id)


async def agent_socket(request: web.Request) -> web.StreamResponse:
    emulator = emulator_of(request)
    if emulator.faults.gateway_status is not None:
        status = emulator.faults.gateway_status
        return json_error(status, f"fault injected: gateway status {status}")
    token = request.query.get("token", "")
    try:
        installation = authenticate_agent(emulator, token)
    except ApiError as err:
        emulator.record("gateway_refused", error=err.message)
        return json_error(err.status, err.message)
    ws = web.WebSocketResponse(max_msg_size=emulator.config.max_frame_bytes)
    await ws.prepare(request)
    connection = AgentConnection(
        installation.agent_id,
        ws,
        request.transport,
        emulator.state.runtime_tokens[token].expires_at,
    )
    await emulator.hub.attach(connection)
    expiry = asyncio.create_task(_expire(emulator, connection))
    try:
        async for message in ws:
            if message.type is WSMsgType.TEXT:
                try:
                    await _handle_text(emulator, installation, connection, message.data)
                except Exception:
                    # An emulator bug must not look like a relay that drops the agent.
                    _LOGGER.exception("frame from %s not handled", installation.agent_id)
                    await _error(connection, "internal error")
            elif message.type is WSMsgType.BINARY:
                await _error(connection, "binary frames are not accepted")
    finally:
        expiry.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await expiry
        emulator.hub.detach(connection)
        emulator.record(
            "agent_disconnected", agent_id=installation.agent_id, close_code=ws.close_code
        )
    return ws


def routes() -> list[web.AbstractRouteDef]:
    return [web.get("/ws/agent", agent_socket)]
