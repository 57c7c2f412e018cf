"""The conversations the agent has seen, read from what it keeps (no relay call).

A conversation is seen when a request came from it, a reply went to it, or a group key of
it is held. Pacerelle gives an agent no group name: a conversation is its id, whether it
is a group, who is in it and when it was last active. A group's members are those of its
current epoch (group_epochs.py) and, while no key of it is held, those who wrote in it; a
direct conversation's are the people the agent talked with there. `recipient` is the `to`
a message for the whole conversation takes (`group:<id>` for a group, the person for a
direct one), what the sender resolves as for any other send.
"""

from dataclasses import dataclass, field

from ..relay.frames import group_recipient, is_group_recipient
from ..values.agent_data import AgentData


@dataclass(frozen=True, slots=True)
class SeenConversation:
    conversation_id: str
    is_group: bool
    # Pseudonymous ids, the agent itself excluded, sorted.
    member_ids: tuple[str, ...]
    # Wall clock of the newest request or reply kept for it; None when only a key is held.
    last_active_at: float | None
    recipient: str


@dataclass
class _Seen:
    is_group: bool = False
    members: set[str] = field(default_factory=set)
    last: float | None = None

    def active(self, at: float) -> None:
        self.last = at if self.last is None else max(self.last, at)


def seen_conversations(data: AgentData, agent_id: str) -> list[SeenConversation]:
    """Every conversation seen, the most recently active first (key-only groups last)."""
    seen = _seen(data, None)
    listed = [_listed(cid, found, data, agent_id) for cid, found in seen.items()]
    return sorted(listed, key=lambda c: (c.last_active_at is None, -(c.last_active_at or 0.0)))


def seen_conversation(
    data: AgentData, agent_id: str, conversation_id: str
) -> SeenConversation | None:
    """The conversation as `seen_conversations` lists it, None if unseen; only what is
    kept of it is worked out (a sensor asks at each of its messages)."""
    found = _seen(data, conversation_id).get(conversation_id)
    return None if found is None else _listed(conversation_id, found, data, agent_id)


def _seen(data: AgentData, only: str | None) -> dict[str, _Seen]:
    """What is kept of each conversation (of `only`, when given)."""
    seen: dict[str, _Seen] = {}

    def of(conversation_id: str) -> _Seen:
        return seen.setdefault(conversation_id, _Seen())

    requests = [item.request for item in data.history.requests]
    requests += list(data.inbox.pending.values())
    for request in requests:
        if only is not None and request.conversation_id != only:
            continue
        found = of(request.conversation_id)
        found.is_group = found.is_group or request.is_group
        found.active(request.received_at)
        found.members.add(request.sender_id)
    for reply in data.history.replies:
        if only is not None and reply.conversation_id != only:
            continue
        found = of(reply.conversation_id)
        in_group = is_group_recipient(reply.to, reply.conversation_id)
        found.is_group = found.is_group or in_group
        found.active(reply.sent_at)
        if not in_group:
            found.members.add(reply.to)
    if only is not None:
        if data.conversations.keys_of(only):
            of(only).is_group = True
        return seen
    for key in data.conversations.group_keys.values():
        of(key.conversation_id).is_group = True
    return seen


def _listed(conversation_id: str, found: _Seen, data: AgentData, agent_id: str) -> SeenConversation:
    members = set(found.members)
    if found.is_group:
        current = data.conversations.group_members(conversation_id, agent_id)
        members = set(current) or members
    members.discard(agent_id)
    ordered = tuple(sorted(members))
    if found.is_group:
        recipient = group_recipient(conversation_id)
    else:
        recipient = ordered[0] if ordered else ""
    return SeenConversation(conversation_id, found.is_group, ordered, found.last, recipient)
