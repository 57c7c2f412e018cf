"""What an opened message must pass before the inbox stores it: it is no replay of a group
message taken before (inbox.py), and the trust door's one judgement of the key that wrote it
(trust/door.py): a blocked key's request is refused here, so no consumer and no history ever
see it. A group message from someone who is no member of the group now (group_epochs.py: a
member who left still holds keys that open) is judged unverified whatever their device's
state: no consumer lets it act (the device's own record in the book is left as it is)."""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from ..crypto_jobs import Opened
from ..trust.door import TrustDoor
from ..values.agent_data import Conversations
from ..values.requests import GroupSeal, Inbox, group_seal
from ..values.trust_book import TrustState


def _unless_replayed(inbox: Inbox) -> Callable[[Opened], Opened]:
    """Refuses a group message whose seal the inbox took before, or met earlier in the
    same batch: the relay resent it under a new id (inbox.py)."""
    seen: set[GroupSeal] = set()

    def judge(item: Opened) -> Opened:
        seal = group_seal(item.message) if item.request is not None else None
        if seal is None:
            return item
        if seal in seen or inbox.has_group_seal(seal):
            return replace(item, request=None, refusal="a replayed group message")
        seen.add(seal)
        return item

    return judge


def checked(
    inbox: Inbox,
    trust: TrustDoor,
    opened: Sequence[Opened],
    now: float,
    *,
    conversations: Conversations,
    agent_id: str,
) -> Iterator[Opened]:
    """The opened messages, replays refused, then each request judged, in order."""
    unless_replayed = _unless_replayed(inbox)
    for item in opened:
        judged = _judged(trust, unless_replayed(item), now)
        yield _as_member(judged, conversations, agent_id)


def _as_member(item: Opened, conversations: Conversations, agent_id: str) -> Opened:
    """A group request whose sender is no member now, judged unverified (module docstring);
    anyone counts while the agent knows no member (no key of the group held)."""
    request = item.request
    if request is None or not request.is_group or request.trust_state is not TrustState.TRUSTED:
        return item
    members = conversations.group_members(request.conversation_id, agent_id)
    if not members or request.sender_id in members:
        return item
    return replace(item, request=replace(request, trust_state=TrustState.UNVERIFIED))


def _judged(trust: TrustDoor, item: Opened, now: float) -> Opened:
    """The opened request with the one trust judgement of the key that wrote it (recorded
    in the book now, so that a change is shown before anything acts); a blocked key's
    request is refused here: no consumer and no history ever see it (trust/door.py)."""
    if item.request is None:
        return item
    request = trust.judge_request(item.request, now)
    if request.trust_state is TrustState.BLOCKED:
        return replace(item, request=None, refusal="from a blocked device or key")
    return replace(item, request=request)
