"""The conversations the agent has seen, read from what it keeps (no relay call).

A conversation is seen when a request came from it, a reply went to it, or a group key of
it is held. Pacerelle gives an agent no group name: a conversation is its id, whether it
is a group, who is in it and when it was last active. A group's members are those of its
current epoch (group_epochs.py) and, while no key of it is held, those who wrote in it; a
direct conversation's are the people the agent talked with there. `recipient` is the `to`
a message for the whole conversation takes (`group:<id>` for a group, the person for a
direct one), what the sender resolves as for any other send.

The host may name conversations (`named`): the store keeps each one's recipient for as long
as it is named, so a named conversation whose history rolled off is still known, and the
agent's own conversation (its owner's) is always known, seen or not.
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..limits import MAX_NAMED_CONVERSATIONS
from ..relay.frames import GROUP_PREFIX, group_recipient, is_group_recipient, is_relay_id
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


class Whose(Protocol):
    """Whose agent this is (AgentConfig): itself, its owner and their direct conversation."""

    @property
    def agent_id(self) -> str: ...
    @property
    def owner_id(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...


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


def known_conversation(
    data: AgentData, whose: Whose, conversation_id: str
) -> SeenConversation | None:
    """The conversation as seen, with the recipient `conversation_recipient` gives it; the
    agent's own one even unseen (its owner's), a named one whose history rolled off with no
    member or activity known; None when none of these."""
    seen = seen_conversation(data, whose.agent_id, conversation_id)
    recipient = _recipient(data, whose, conversation_id, lambda: seen)
    if recipient is None:
        return None
    own = conversation_id == whose.conversation_id
    if own and (seen is None or not seen.member_ids):
        members: tuple[str, ...] = (whose.owner_id,)
    else:
        members = seen.member_ids if seen is not None else ()
    return SeenConversation(
        conversation_id,
        is_group_recipient(recipient, conversation_id),
        members,
        seen.last_active_at if seen is not None else None,
        recipient,
    )


def conversation_recipient(data: AgentData, whose: Whose, conversation_id: str) -> str | None:
    """The `to` that reaches all of a conversation: the owner in the agent's own, the one
    kept for a named one, the one seen there; None when the agent knows nothing of it."""
    return _recipient(
        data,
        whose,
        conversation_id,
        lambda: seen_conversation(data, whose.agent_id, conversation_id),
    )


def _recipient(
    data: AgentData,
    whose: Whose,
    conversation_id: str,
    seen: Callable[[], SeenConversation | None],
) -> str | None:
    """The one order of `conversation_recipient` (`seen` asked last: it reads the history)."""
    if conversation_id == whose.conversation_id:
        return whose.owner_id
    named = data.conversations.named.get(conversation_id)
    if named is not None:
        return named
    found = seen()
    return found.recipient if found is not None and found.recipient else None


def named_recipients(
    data: AgentData, whose: Whose, named: Collection[str], known: Mapping[str, str]
) -> dict[str, str]:
    """The recipients the store keeps for the conversations `named` by the host (the agent's
    own aside: always known): the one kept already, else the one `known` to the host from
    before (a `to` of this conversation only: a person's id, or its own group), else the
    one seen now. A named conversation none of these tells is left out (a send to it goes
    as to any conversation not named)."""
    kept: dict[str, str] = {}
    for conversation_id in sorted(set(named)):
        if conversation_id == whose.conversation_id:
            continue
        recipient = data.conversations.named.get(conversation_id)
        if recipient is None:
            recipient = _checked(known.get(conversation_id), conversation_id)
        if recipient is None:
            seen = seen_conversation(data, whose.agent_id, conversation_id)
            recipient = seen.recipient if seen is not None and seen.recipient else None
        if recipient is not None and len(kept) < MAX_NAMED_CONVERSATIONS:
            kept[conversation_id] = recipient
    return kept


def _checked(recipient: str | None, conversation_id: str) -> str | None:
    """`recipient` if it may reach all of `conversation_id`: its own group or a person."""
    if recipient is None or not is_relay_id(recipient):
        return None
    if recipient.startswith(GROUP_PREFIX) and not is_group_recipient(recipient, conversation_id):
        return None
    return recipient
