"""Group key envelopes for a batch of incoming messages, fetched before the agent's lock.

The inbox pipeline decides which groups need envelopes on a snapshot of the data
(`wanted_groups`), fetches them without the lock (`fetch_envelopes`: a send, which takes
the lock, never waits for the relay's answer), then, under the lock, keeps those the data
of then still wants (`still_wanted`). The data may have moved meanwhile (a send fetched
and learned the group's keys, say): learning (crypto_jobs.open_batch, on the data under
the lock) skips every key held by then, and the group's epoch moves only on what it newly
learns (group_epochs.py), so a key is never learned twice nor founds an epoch twice.

Bounded: at most MAX_KEYED_GROUPS groups a batch (the store keeps no more), fetched
concurrently and all within FETCH_SECONDS (one request's own bound, HTTP_REQUEST_TIMEOUT),
each answer at most limits.MAX_GROUP_KEY_ENVELOPES. A group not answered in time, or beyond
the bound, has its messages wait for their key (deferred, inbox/pipeline.py).
"""

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import PacerelleError
from ..limits import HTTP_REQUEST_TIMEOUT, MAX_KEYED_GROUPS
from ..relay.api import AgentApi
from ..relay.frames import InboundMessage
from ..values.agent_data import AgentData
from ..values.groups import parse_message
from ..values.handed_over import handed_over_before
from ..values.requests import Receipt

_LOGGER = logging.getLogger(__name__)

type Envelopes = Mapping[str, Sequence[Mapping[str, Any]]]

FETCH_SECONDS: float = HTTP_REQUEST_TIMEOUT


def wanted_groups(data: AgentData, messages: Iterable[InboundMessage]) -> list[str]:
    """The groups of the new encrypted group messages whose key `data` lacks or may not use
    yet (a key of an epoch not entered: the fetch may move the group), in the order of
    their first message, at most MAX_KEYED_GROUPS."""
    inbox, marks = data.inbox, data.handed_over
    conversations = data.conversations
    wanted: dict[str, None] = {}
    for message in messages:
        if (
            not (message.encrypted and message.is_group)
            or message.conversation_id in wanted
            or inbox.receipt(message.message_id, message.digest) is not Receipt.NEW
            or handed_over_before(marks, message)
        ):
            continue
        try:
            key_name = parse_message(message.payload).key_name
        except PacerelleError:
            continue  # refused when opened
        if not conversations.opens_with(key_name):
            wanted[message.conversation_id] = None
    if len(wanted) > MAX_KEYED_GROUPS:
        _LOGGER.warning(
            "Fetching the keys of %d groups of %d (the rest wait for their next message)",
            MAX_KEYED_GROUPS,
            len(wanted),
        )
    return list(wanted)[:MAX_KEYED_GROUPS]


async def fetch_envelopes(api: AgentApi, conversation_ids: Sequence[str]) -> Envelopes:
    """The envelopes of each group the relay answered for within FETCH_SECONDS."""
    fetched: dict[str, Sequence[Mapping[str, Any]]] = {}

    async def fetch(conversation_id: str) -> None:
        try:
            fetched[conversation_id] = await api.group_keys(conversation_id)
        except PacerelleError as err:
            _LOGGER.warning("Could not fetch group keys: %s", err)

    if not conversation_ids:
        return fetched
    try:
        async with asyncio.timeout(FETCH_SECONDS), asyncio.TaskGroup() as group:
            for conversation_id in conversation_ids:
                group.create_task(fetch(conversation_id))
    except TimeoutError:
        _LOGGER.warning(
            "Could not fetch group keys of %d groups within %s s",
            len(conversation_ids) - len(fetched),
            FETCH_SECONDS,
        )
    return fetched


def still_wanted(
    fetched: Envelopes, data: AgentData, messages: Iterable[InboundMessage]
) -> Envelopes:
    """Of `fetched`, the groups `data` (taken under the lock) still wants for `messages`."""
    wanted = wanted_groups(data, messages)
    late = [cid for cid in wanted if cid not in fetched]
    if late:
        # Wanted only by the data of now (a key evicted meanwhile): the next batch fetches.
        _LOGGER.debug("Group keys of %d groups not fetched for this batch", len(late))
    return {cid: fetched[cid] for cid in wanted if cid in fetched}
