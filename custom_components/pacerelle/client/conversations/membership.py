"""Whether the agent is still in a group, as the relay last said, and who is in it.

Pacerelle does not tell an agent it was removed: the relay answers `GET /agent/group-keys`
with 403. So the host asks (`Agent.check_groups`), kept in memory and asked again each start:
a refusal leaves the group; keys handed out or a message of the group joins it again; any
other answer changes nothing. A lying relay can only show a group as left, which it can make
true anyway; being left changes no key, session or trust decision, it only makes the host show
the group unavailable. At most MAX_KEYED_GROUPS groups, asked concurrently within CHECK_SECONDS.
"""

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import PacerelleAuthError, PacerelleError
from ..limits import HTTP_REQUEST_TIMEOUT, MAX_KEYED_GROUPS
from ..relay.api import AgentApi
from ..values.trust_book import TrustBook, TrustState

NOT_A_MEMBER = 403
CHECK_SECONDS: float = HTTP_REQUEST_TIMEOUT


@dataclass(frozen=True, slots=True)
class MemberDevice:
    """One device of a member and its trust state, as the trust repair shows it."""

    device_id: str
    state: TrustState


@dataclass(frozen=True, slots=True)
class Member:
    person_id: str
    devices: tuple[MemberDevice, ...]


def members_with_trust(book: TrustBook, member_ids: Iterable[str]) -> tuple[Member, ...]:
    """Each member (pseudonymous id) with the trust state of each device the book knows."""
    devices: dict[str, list[MemberDevice]] = {}
    for device in book.devices.values():
        devices.setdefault(device.person_id, []).append(
            MemberDevice(device.device_id, device.state)
        )
    return tuple(
        Member(person, tuple(sorted(devices.get(person, []), key=lambda d: d.device_id)))
        for person in sorted(set(member_ids))
    )


async def relay_says_member(api: AgentApi, conversation_id: str) -> bool | None:
    """True: the relay hands out the group's keys; False: it refuses them as to a
    non-member; None: the answer says neither."""
    try:
        await api.group_keys(conversation_id)
    except PacerelleAuthError as err:
        return False if err.status == NOT_A_MEMBER else None
    except PacerelleError:
        return None
    return True


async def relay_answers(api: AgentApi, conversation_ids: Sequence[str]) -> dict[str, bool]:
    """What the relay says of each group (the first MAX_KEYED_GROUPS) within CHECK_SECONDS;
    groups it said nothing of are left out."""
    answers: dict[str, bool] = {}

    async def ask(conversation_id: str) -> None:
        member = await relay_says_member(api, conversation_id)
        if member is not None:
            answers[conversation_id] = member

    asked = list(dict.fromkeys(conversation_ids))[:MAX_KEYED_GROUPS]
    try:
        async with asyncio.timeout(CHECK_SECONDS), asyncio.TaskGroup() as group:
            for conversation_id in asked:
                group.create_task(ask(conversation_id))
    except TimeoutError:
        pass  # those not answered stay as they were
    return {cid: answers[cid] for cid in asked if cid in answers}


@dataclass
class GroupMemberships:
    """The groups the relay last said the agent is not in (used on the event loop only)."""

    _left: dict[str, None] = field(default_factory=dict)

    def left(self, conversation_id: str) -> bool:
        return conversation_id in self._left

    def record(self, conversation_id: str, member: bool | None) -> bool:
        """Keep what the relay said; whether the group's state changed."""
        if member is None or member is not self.left(conversation_id):
            return False  # nothing said, or what is known already
        if member:
            del self._left[conversation_id]
            return True
        self._left[conversation_id] = None
        while len(self._left) > MAX_KEYED_GROUPS:
            del self._left[next(iter(self._left))]
        return True

    def heard(self, conversation_id: str) -> bool:
        """One of the group's messages was delivered: the relay routes it to us again."""
        return self.record(conversation_id, True)
