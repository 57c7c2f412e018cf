"""The trust door: at run time, the one place that answers the two questions of trust.

Owned by the agent (agent_core.py): its book is committed with the agent's data, in the
transaction of the request it judged, and a decision is kept before it is returned. The rules
are TrustBook's (book.py); here each is applied once:
- **May this request act?** `judge_request`, when the pipeline opens it: the judgement is
  carried by the Request (`trust_state` and kin) and every consumer reads that, never the book.
  A blocked key's request is refused here: it reaches no consumer and no history.
- **May this key read what we seal?** `SealRule`, inside crypto_jobs.seal on the key sealed
  with, whatever the send's path, and again at the queue's flush (`recheck`). No source: only
  a trusted key; an answer: only the exact key that wrote the request; a group: not while a
  blocked device holds a key of the epoch. A refusal is a SendRefusal, never another device.
A request stored before judgements were kept is unverified and acts on nothing.
"""

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace

from ..errors import SendError, SendRefusal
from ..relay.frames import GROUP_PREFIX
from ..values.agent_data import Conversations
from ..values.groups import GroupKey
from ..values.requests import Request
from ..values.send_queue import QueuedSend
from ..values.trust_book import DeviceTrust, TrustBook, TrustState

type TrustKeep = Callable[[], Awaitable[None]]
type TrustListener = Callable[[DeviceTrust, DeviceTrust | None], None]
type SessionKey = Callable[[str], bytes | None]


def _nothing(*_args: object) -> None:
    return None


async def _kept_nowhere() -> None:
    return None


@dataclass(frozen=True, slots=True)
class SealRule:
    """What a seal may be for, on a snapshot of the book (seal runs in the executor)."""

    book: TrustBook
    answering: Request | None = None

    def state(self, person_id: str, device_id: str, key: bytes | None) -> TrustState:
        """The state that decides sealing for this key (TrustBook.readable: no trust on
        first use at a seal)."""
        return self.book.readable(person_id, device_id, key)

    def direct_refusal(
        self, person_id: str, device_id: str, key: bytes | None, answered: bytes | None
    ) -> SendRefusal | None:
        """The direct-send rule, at the seal and again at the flush (`recheck`): why the
        session to (person, device), whose remote identity key is `key`, may not read what
        is sealed now (None: it may). A blocked device never; the key that wrote the request
        answered (`answered`) always; else only a trusted key."""
        state = self.state(person_id, device_id, key)
        if state is TrustState.BLOCKED:
            return SendRefusal.BLOCKED_DEVICE
        if answered is not None:
            return None if key == answered else SendRefusal.KEY_CHANGED
        return None if state is TrustState.TRUSTED else SendRefusal.UNTRUSTED_DEVICE

    def check_direct(self, person_id: str, device_id: str, key: bytes | None) -> None:
        """SendError unless the session to (person, device), whose remote identity key is
        `key`, may read what is sealed now (`direct_refusal`)."""
        request = self.answering
        answered = request.sender_identity if request is not None else None
        refusal = self.direct_refusal(person_id, device_id, key, answered)
        if refusal is not None:
            raise SendError(refusal, f"{person_id} device {device_id}")

    def group_key_allowed(self, asker: GroupKey | None) -> Callable[[GroupKey], bool]:
        """Which group keys a group send may be sealed with: those a message would be
        trusted from, and for a reply the asker's own (`asker`: the key the answered
        request opened with)."""

        def allowed(key: GroupKey) -> bool:
            if asker is not None and _same_sender(key, asker):
                return self.state(*_sender_of(key)) is not TrustState.BLOCKED
            if key.sender_id is None or key.sender_device_id is None:
                return False
            return self.state(*_sender_of(key)) is TrustState.TRUSTED

        return allowed

    def blocked_reader(self, readers: Iterable[GroupKey]) -> GroupKey | None:
        """A key among `readers` (Conversations.group_readers) that a device the user blocked
        delivered, if any. A group message is sealed once for all its members, and each
        member's device holds every other's key of the epoch: a blocked one would read it."""
        for key in readers:
            if key.sender_id is None or key.sender_device_id is None:
                continue  # stored before its sender was recorded: nothing to judge
            if self.state(*_sender_of(key)) is TrustState.BLOCKED:
                return key
        return None

    def check_group(self, key: GroupKey, readers: Iterable[GroupKey]) -> None:
        """SendError(blocked_group_member) if a blocked device reads what `key` seals."""
        blocked = self.blocked_reader(readers)
        if blocked is not None:
            raise SendError(
                SendRefusal.BLOCKED_GROUP_MEMBER,
                f"{blocked.sender_id} device {blocked.sender_device_id} in {key.conversation_id}",
            )


class TrustDoor:
    """One agent's trust book at run time, and the two decisions taken with it."""

    def __init__(
        self,
        owner_id: str,
        book: TrustBook | None = None,
        *,
        changed: TrustListener | None = None,
    ) -> None:
        self.owner_id = owner_id
        self._book = book if book is not None else TrustBook()
        self._keep: TrustKeep = _kept_nowhere
        self._changed: TrustListener = changed or _nothing

    @property
    def book(self) -> TrustBook:
        return self._book

    def kept_by(self, keep: TrustKeep) -> None:
        """How a decision is made durable: the agent's commit of its data (agent_core.py)."""
        self._keep = keep

    async def keep(self) -> None:
        """Return once the book as it is now is committed (after `decide`)."""
        await self._keep()

    def judge_request(self, request: Request, now: float) -> Request:
        """The request with the judgement of the key that wrote it, recorded in the book (and
        committed with the request: the inbox's commit carries the door's book)."""
        device = request.trust_device_id or request.sender_device_id
        key = request.sender_identity
        before = self._book.get(request.sender_id, device)
        self._book, judged = self._book.observe(request.sender_id, device, key, self.owner_id, now)
        if before is None or before.state is not judged.state or before.identity_key != key:
            self._changed(judged, before)
        return replace(request, trust_device_id=device, trust_state=judged.state)

    def judged_now(self, request: Request) -> DeviceTrust:
        """The key that wrote `request`, judged on the book as it is now (nothing recorded):
        for an answer held until the user decides (actions/ask.py). A request without a
        recorded key (not encrypted, or stored before) stays unverified."""
        judged = request.judged
        if judged.identity_key is None:
            return judged
        state = self._book.readable(judged.person_id, judged.device_id, judged.identity_key)
        return replace(judged, state=state)

    def blocked_now(self, request: Request) -> bool:
        """Whether the key that wrote `request` is blocked now (a view leaves it out)."""
        judged = request.judged
        state = self._book.readable(judged.person_id, judged.device_id, judged.identity_key)
        return state is TrustState.BLOCKED

    def check_answerable(self, request: Request) -> None:
        """SendError (UNTRUSTED_REQUEST) unless `request` was judged trusted when opened: a
        model must not act on what a device nobody trusted told it."""
        judged = request.judged
        if not judged.trusted:
            raise SendError(
                SendRefusal.UNTRUSTED_REQUEST,
                f"{judged.person_id} device {judged.device_id} is {judged.state.value}",
            )

    def decide(
        self, person_id: str, device_id: str, state: TrustState, *, key: bytes | None
    ) -> DeviceTrust:
        """The user's decision for the device, for the key they were shown (TrustBook.decided:
        KeyChangedError if it presents another one now; KeyError: unknown device); durable
        once `keep` returns."""
        before = self._book.get(person_id, device_id)
        self._book = self._book.decided(person_id, device_id, state, key=key)
        decided = self._book.devices[f"{person_id}|{device_id}"]
        self._changed(decided, before)
        return decided

    def seal_rule(self, answering: Request | None = None) -> SealRule:
        return SealRule(self._book, answering)

    def choose_device(
        self, person_id: str, proposed: str | None, session_key: SessionKey
    ) -> str | None:
        """The device a send without a source goes to: `proposed` (the person's last
        device here) if its session's key is trusted, else the most recently seen trusted
        device whose session here has a trusted key. SendError(no_trusted_device) when
        sessions exist but none may read it; `proposed` when there is no session at all
        (the seal then fails: nobody wrote). An explicit device is never replaced: the
        caller seals for it or fails."""
        rule = self.seal_rule()
        candidates = [proposed] if proposed is not None else []
        candidates += [d.device_id for d in self._book.trusted_devices(person_id)]
        for device in candidates:
            key = session_key(device)
            if key is not None and rule.state(person_id, device, key) is TrustState.TRUSTED:
                return device
        known = [d.device_id for d in self._book.devices.values() if d.person_id == person_id]
        if any(session_key(device) is not None for device in [*candidates, *known]):
            raise SendError(SendRefusal.NO_TRUSTED_DEVICE, person_id)
        return proposed


def recheck(
    rule: SealRule,
    send: QueuedSend,
    conversations: Conversations,
    session_key: Callable[[str, str], bytes | None],
) -> SendRefusal | None:
    """Whether a queued send may still go out at the flush, decided again on the book as it
    is now (None: it may): the key it was sealed for must still be allowed as at the seal,
    and a group's readers must still hold no blocked device. `session_key(person, device)`
    is the current session's key, for a send queued before its recipient was recorded."""
    to, device, key = send.to, send.device_id, send.identity_key
    if to is None:  # queued before recipients were kept: the frame's, as it is now
        to, device = _frame_recipient(send.frame)
        key = session_key(to, device) if to and device else None
        if to is None or to.startswith(GROUP_PREFIX):
            return None
    if send.group_key is not None:
        return _recheck_group(rule, send.group_key, conversations)
    # A reply was sealed for the key that wrote the request (checked at the seal).
    return rule.direct_refusal(to, device or "", key, key if send.answers is not None else None)


def _recheck_group(rule: SealRule, name: str, conversations: Conversations) -> SendRefusal | None:
    """`recheck` for a group send sealed with the key `name`."""
    held = conversations.group_keys
    group_key = held.get(name)
    asker = rule.answering
    asking = held.get(asker.group_key) if asker and asker.group_key else None
    if group_key is None or not rule.group_key_allowed(asking)(group_key):
        return SendRefusal.NO_TRUSTED_DEVICE
    if rule.blocked_reader(conversations.group_readers(group_key)) is not None:
        return SendRefusal.BLOCKED_GROUP_MEMBER
    return None


def _frame_recipient(frame: str) -> tuple[str | None, str | None]:
    try:
        parsed = json.loads(frame)
    except ValueError:
        return None, None
    if not isinstance(parsed, dict):
        return None, None
    to, device = parsed.get("to"), parsed.get("to_device_id")
    return (to if isinstance(to, str) else None), (device if isinstance(device, str) else None)


def _sender_of(key: GroupKey) -> tuple[str, str, bytes | None]:
    return (key.sender_id or "", key.sender_device_id or "", key.sender_identity)


def _same_sender(key: GroupKey, other: GroupKey) -> bool:
    return (key.sender_id, key.sender_device_id, key.sender_identity) == (
        other.sender_id,
        other.sender_device_id,
        other.sender_identity,
    )
