"""Agent data of a given size, built with the project's own classes (tests and the bench).

One real session (the reference peer's PreKey message opened by the agent's engine) is the
model of every session record; archived states are copies with their own base keys, as
promotions leave them. Requests, history, group keys, queued sends and checkpoints are
the runtime's own dataclasses, so the store sees what it sees in use.
"""

import secrets
from dataclasses import dataclass, replace

from custom_components.pacerelle.client.signal.engine import decrypt
from custom_components.pacerelle.client.signal.session import PeerAddress, SessionRecord
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.checkpoints import (
    Checkpoint,
    Checkpoints,
    CheckpointStatus,
)
from custom_components.pacerelle.client.values.group_epochs import GroupEpoch
from custom_components.pacerelle.client.values.groups import GroupKey
from custom_components.pacerelle.client.values.history import HandledRequest, History, Reply
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.send_queue import QueuedSend, SendQueue
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer


@dataclass(frozen=True)
class Shape:
    sessions: int = 0
    archived: int = 0  # archived states per session
    pending: int = 0
    history: int = 0  # requests and replies each
    text: int = 100  # characters of each request's text
    group_keys: int = 0
    queued: int = 0
    checkpoints: int = 0


SHAPES = {
    "empty": Shape(),
    "typical": Shape(sessions=2, archived=1, pending=2, history=50, checkpoints=2),
    "busy": Shape(sessions=12, archived=2, pending=100, history=50, group_keys=64, queued=5),
    "large": Shape(sessions=256, archived=4, pending=500, history=50, text=30_000, group_keys=4096),
    "cap": Shape(sessions=256, archived=40, pending=500, history=50, text=30_000, group_keys=4096),
}


def model_session() -> tuple[AgentData, SessionRecord]:
    """The agent's data with one real session, and that session's record."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    peer = PeerAddress("usr_0", "cnv_0", 1)
    state, _ = decrypt(agent.state, peer, human.encrypt(AGENT_NAME, b"hello"))
    return AgentData(state), state.record(peer)


def request(number: int, text: int, conversation: str = "cnv_0") -> Request:
    return Request(
        message_id=f"msg_{number}",
        conversation_id=conversation,
        sender_id="usr_0",
        sender_device_id="1",
        to="agent",
        encrypted=True,
        kind="text",
        text="x" * text,
        reply_to_message_id=None,
        received_at=1_700_000_000.0 + number,
    )


def grown(base: AgentData, model: SessionRecord, shape: Shape) -> AgentData:
    """`base` grown by `shape`, keeping what it holds (its identity, sessions, requests,
    keys), joined by invented peers and requests (ids `usr_N`, `cnv_N`, `msg_N`, `grp_N`).
    Where the ids meet, the base's requests, keys and checkpoints win and its sessions do
    not (model_session's own session, at `usr_0` in `cnv_0`, gets archived states)."""
    assert model.current is not None
    signal = base.signal
    for n in range(shape.sessions):
        archived = tuple(
            replace(model.current, alice_base_key=secrets.token_bytes(33))
            for _ in range(shape.archived)
        )
        record = replace(model, previous=archived)
        signal = signal.with_record(
            PeerAddress(f"usr_{n}", f"cnv_{n % 8}", 1 + n % 3), record, now=float(n)
        )
    pending = {f"msg_{n}": request(n, shape.text) for n in range(shape.pending)}
    # The newest requests are both pending and in history, one object (as accepted).
    history = History(
        tuple(
            HandledRequest(pending.get(f"msg_{n}") or request(n, shape.text))
            for n in range(shape.pending - shape.history, shape.pending)
        )
        + base.history.requests,
        tuple(
            Reply(f"rep_{n}", "cnv_0", "usr_0", None, "text", "y" * 200, None, None, 1.0 + n)
            for n in range(shape.history)
        )
        + base.history.replies,
    )
    keys = {}
    for n in range(shape.group_keys):
        key = GroupKey(
            f"grp_{n // 64}", f"key_{n}", 1, secrets.token_bytes(32), f"usr_{n % 64}", "1"
        )
        keys[key.name] = key
    queued = SendQueue(
        tuple(QueuedSend(f"out_{n}", "cnv_0", "z" * 2000, 1.0, 1e12) for n in range(shape.queued))
        + base.queued.sends
    )
    checkpoints = Checkpoints(
        {
            f"msg_{n}": Checkpoint(
                f"msg_{n}", "cnv_0", "summary", "next", None, CheckpointStatus.ACTIVE, 1.0
            )
            for n in range(shape.checkpoints)
        }
        | dict(base.checkpoints.items)
    )
    accepted = {f"msg_{n}": "d" * 64 for n in range(min(2000, shape.pending + shape.history))}
    groups = sorted({key.conversation_id for key in keys.values()})
    epochs = {group: GroupEpoch(1, frozenset({("usr_0", "1")})) for group in groups}
    seals = {name: (f"iv{n}a", f"iv{n}b") for n, name in enumerate(list(keys)[:8])}
    inbox = replace(
        base.inbox,
        accepted={**accepted, **base.inbox.accepted},
        pending={**pending, **base.inbox.pending},
        group_seals={**seals, **base.inbox.group_seals},
    )
    if shape.group_keys:
        inbox = replace(inbox, legacy_seals=inbox.legacy_seals | {"a" * 32, "b" * 32})
    conversations = replace(
        base.conversations,
        group_keys={**keys, **base.conversations.group_keys},
        group_epochs={**epochs, **base.conversations.group_epochs},
    )
    return replace(
        base,
        signal=signal,
        inbox=inbox,
        history=history,
        conversations=conversations,
        queued=queued,
        checkpoints=checkpoints,
    )
