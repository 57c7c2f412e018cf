"""What a host may read of a running agent: answers made for it, never the state itself.

`Agent` (agent/agent.py) is built on `AgentReads`. Requests come as `Request.for_host` (no
attachment key), and diagnostics get an `AgentSummary`: ids, counts and times, never a
key. So the HA side asks these questions and reads no `AgentData` (tests/client/test_face.py).
"""

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..agent_core import AgentCore, ConnectionState
from ..conversations.membership import GroupMemberships, Member, members_with_trust
from ..conversations.seen import (
    SeenConversation,
    conversation_recipient,
    known_conversation,
    seen_conversation,
    seen_conversations,
)
from ..limits import MAX_HISTORY_ENTRIES
from ..outbox.sender import Recipient, Sender
from ..relay.frames import is_group_recipient
from ..signal.identity import verification_code
from ..values.agent_data import AgentData, UncertainSend
from ..values.checkpoints import Checkpoint
from ..values.group_epochs import counts_as_member
from ..values.history import History
from ..values.requests import Request
from ..values.sent_widgets import SentWidget, sent_widget
from ..values.trust_book import TrustState


@dataclass(frozen=True, slots=True)
class AgentStatus:
    state: ConnectionState
    pending: int
    uncertain_sends: int
    queued_sends: int
    verification_code: str
    last_message_at: float | None


@dataclass(frozen=True, slots=True)
class SessionSummary:
    current_version: int | None  # None: only archived states are left
    archived: int


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """What diagnostics may show of the agent's state: ids, counts and times, no key."""

    device_id: int
    signed_prekey: tuple[int, float]  # (id, created at)
    kyber_prekey: tuple[int, float]
    retired_prekeys: int
    one_time_prekeys: int
    one_time_prekeys_published: int
    sessions: Mapping[str, SessionSummary]  # by storage name
    pending: tuple[Request, ...]
    received_not_handed_over: int
    accepted_receipts: int
    rejected_receipts: int
    history: History
    uncertain_sends: tuple[UncertainSend, ...]
    queued_sends: int
    queued_bytes: int
    oldest_queued_at: float | None
    checkpoints: int
    evictions: Mapping[str, Any]
    history_key_conversations: tuple[str, ...]  # sorted
    group_keys: int
    last_device_ids: tuple[str, ...]  # sorted: which device each conversation last wrote from


def arrival_ranks(pending: Iterable[str], history: Sequence[str]) -> dict[str, int]:
    """Acceptance order of every request still known (pending or in the history).

    The history holds the last accepted requests in order; a pending request missing
    from it was accepted before all of them.
    """
    kept = set(history)
    older = [message_id for message_id in pending if message_id not in kept]
    return {message_id: rank for rank, message_id in enumerate([*older, *history])}


class AgentReads:
    """The agent's read side: each answer from the state as it is now."""

    _core: AgentCore
    _sender: Sender
    _memberships: GroupMemberships
    # blocked_in_groups' last answer and what it was worked out from: the blocked devices
    # (their names and keys), the group keys and the epochs (immutable values, compared by
    # identity and held, so never recycled).
    _blocked_from: tuple[frozenset[tuple[str, bytes | None]], object, object] | None = None
    _blocked: Mapping[str, tuple[str, str]] = MappingProxyType({})

    @property
    def status(self) -> AgentStatus:
        self._sender.outbox.settle(time.time())
        data = self._core.data
        requests = data.history.requests
        return AgentStatus(
            state=self._core.state,
            pending=len(data.inbox.pending),
            uncertain_sends=len(data.uncertain),
            queued_sends=len(data.queued),
            verification_code=self.verification_code,
            # When the newest accepted request arrived (wall clock), from the saved history.
            last_message_at=requests[-1].request.received_at if requests else None,
        )

    @property
    def verification_code(self) -> str:
        return verification_code(self._core.data.signal.prekeys.identity_key)

    @property
    def data(self) -> AgentData:
        """The state itself, for the client and its tests; a host reads the views below."""
        return self._core.data

    def find_request(self, message_id: str) -> Request | None:
        """A request by id: pending, being handed over, or still in the history."""
        request = self._sender.find_request(message_id)
        return request.for_host() if request is not None else None

    def pending_requests(self, conversation_id: str | None = None) -> list[Request]:
        return [
            request.for_host()
            for request in self._core.data.inbox.pending.values()
            if conversation_id is None or request.conversation_id == conversation_id
        ]

    def arrival_ranks(self) -> dict[str, int]:
        """Every known request's message id -> its rank in acceptance order (from 0)."""
        data = self._core.data
        return arrival_ranks(
            data.inbox.pending, [item.request.message_id for item in data.history.requests]
        )

    def handled(self, message_id: str) -> bool:
        """Whether a known request was marked processed (no longer pending) or answered."""
        data = self._core.data
        if message_id not in data.inbox.pending:
            return self._sender.find_request(message_id) is not None
        return any(
            message_id in (reply.source_message_id, reply.reply_to_message_id)
            for reply in data.history.replies
        )

    def history(
        self, conversation_id: str | None = None, limit: int = MAX_HISTORY_ENTRIES
    ) -> History:
        history = self._core.data.history.filtered(
            conversation_id, max(1, min(limit, MAX_HISTORY_ENTRIES))
        )
        return history.for_host()

    def uncertain_sends(self) -> tuple[UncertainSend, ...]:
        """Sends whose delivery could not be confirmed (never sent twice), the oldest first."""
        return self._core.data.uncertain

    def widget(self, widget_id: str) -> SentWidget | None:
        """A widget we sent, as its sends in the history leave it (sent_widgets.py)."""
        return sent_widget(self._core.data.history, widget_id)

    def group_members(self, conversation_id: str) -> frozenset[str]:
        """The group's members now, the agent aside (group_epochs.py); empty: none known."""
        return self._core.data.conversations.group_members(
            conversation_id, self._core.config.agent_id
        )

    def is_member_now(self, request: Request) -> bool:
        """Whether a group request's sender is a member now (group_epochs.py
        `counts_as_member`): a member who left still holds an old key that opens."""
        members = self.group_members(request.conversation_id)
        return counts_as_member(members, request.sender_id)

    def recipient(
        self,
        source_message_id: str | None = None,
        conversation_id: str | None = None,
        to: str | None = None,
    ) -> Recipient:
        """Who a send with these fields goes to, as the send resolves it (outbox/sender.py:
        a whole group or a person, in which conversation). SendError: the request answered
        is unknown."""
        return self._sender.recipient(source_message_id, conversation_id, to)

    def blocked_in_groups(self) -> dict[str, tuple[str, str]]:
        """Group -> (person, device) of a device the user blocked that holds a key of the
        group's current epoch: the trust door seals nothing for that group meanwhile
        (trust/door.py `check_group`), so the host can say why."""
        rule = self._core.trust.seal_rule()
        conversations = self._core.data.conversations
        blocked = frozenset(
            (name, device.identity_key)
            for name, device in rule.book.devices.items()
            if device.state is TrustState.BLOCKED
        )
        source = (blocked, conversations.group_keys, conversations.group_epochs)
        previous = self._blocked_from
        if (
            previous is not None
            and previous[0] == blocked
            and previous[1] is source[1]
            and previous[2] is source[2]
        ):
            return dict(self._blocked)  # asked at each message and status: rarely changed
        found: dict[str, tuple[str, str]] = {}
        for group in sorted({k.conversation_id for k in conversations.group_keys.values()}):
            key = rule.blocked_reader(conversations.current_readers(group))
            if key is not None and key.sender_id and key.sender_device_id:
                found[group] = (key.sender_id, key.sender_device_id)
        self._blocked_from, self._blocked = source, MappingProxyType(dict(found))
        return found

    def conversations(self) -> list[SeenConversation]:
        """The conversations seen (conversations/seen.py), the most recently active first."""
        return seen_conversations(self._core.data, self._core.config.agent_id)

    def is_group(self, conversation_id: str) -> bool:
        """Whether the conversation is a group, as far as the agent knows it (a send to it
        without `to` reaches the group); False for one it knows nothing of. Never raises:
        status callbacks ask it."""
        to = conversation_recipient(self._core.data, self._core.config, conversation_id)
        return is_group_recipient(to, conversation_id)

    def conversation(self, conversation_id: str) -> SeenConversation | None:
        """The conversation as seen, named or the agent's own (conversations/seen.py
        `known_conversation`); None when the agent knows nothing of it."""
        return known_conversation(self._core.data, self._core.config, conversation_id)

    def members(self, conversation_id: str) -> tuple[Member, ...]:
        """A conversation's members (as `conversations` lists them: those seen), each with
        the trust state of each of their devices (the trust door's book)."""
        seen = seen_conversation(self._core.data, self._core.config.agent_id, conversation_id)
        return members_with_trust(self._core.trust.book, seen.member_ids if seen else ())

    def has_left(self, conversation_id: str) -> bool:
        """Whether the relay last said the agent is not in this group (`check_groups`)."""
        return self._memberships.left(conversation_id)

    def checkpoints(
        self, conversation_id: str | None = None, include_completed: bool = False
    ) -> list[Checkpoint]:
        return self._core.data.checkpoints.listed(conversation_id, include_completed)

    def summary(self) -> AgentSummary:
        """What diagnostics show of the state (AgentSummary)."""
        return summary(self._core.data)


def summary(data: AgentData) -> AgentSummary:
    prekeys = data.signal.prekeys
    conversations = data.conversations
    return AgentSummary(
        device_id=prekeys.device_id,
        signed_prekey=(prekeys.signed_prekey.prekey_id, prekeys.signed_prekey.created_at),
        kyber_prekey=(prekeys.kyber_prekey.prekey_id, prekeys.kyber_prekey.created_at),
        retired_prekeys=len(prekeys.retired),
        one_time_prekeys=len(prekeys.one_time_prekeys),
        one_time_prekeys_published=len(data.published_prekeys),
        sessions={
            name: SessionSummary(
                record.current.version if record.current else None, len(record.previous)
            )
            for name, record in data.signal.sessions.items()
        },
        pending=tuple(request.for_host() for request in data.inbox.pending.values()),
        received_not_handed_over=len(data.inbox.received),
        accepted_receipts=len(data.inbox.accepted),
        rejected_receipts=len(data.inbox.rejected),
        history=data.history.for_host(),
        uncertain_sends=data.uncertain,
        queued_sends=len(data.queued),
        queued_bytes=data.queued.total_bytes,
        oldest_queued_at=min((s.queued_at for s in data.queued.sends), default=None),
        checkpoints=len(data.checkpoints.items),
        evictions=data.evictions.to_json(),
        history_key_conversations=tuple(sorted(conversations.history_keys)),
        group_keys=len(conversations.group_keys),
        last_device_ids=tuple(sorted(conversations.last_devices.values())),
    )
