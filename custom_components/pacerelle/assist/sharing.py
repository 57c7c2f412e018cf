"""How the Assist bridge shares a conversation with automations.

A keyword automation and the bridge both receive every `pacerelle_message` event. A
request an automation has answered (a reply, a question or a widget whose source or
reply-to is the request, sent or queued) or marked processed within AUTOMATION_GRACE of
its event belongs to that automation: the bridge leaves it alone, so the person does not
get a second answer (Assist's "Sorry, I couldn't understand that" after the automation's).
A request still pending and unanswered after that goes to Assist as before.
"""

import asyncio
import time
from typing import Final

from ..client import Agent

# Long enough for an automation's first send or mark_processed (they start at the event);
# short enough that Assist's answer does not feel late.
AUTOMATION_GRACE: Final = 1.5


async def async_grace(since: float) -> None:
    """Wait until AUTOMATION_GRACE has passed since `since` (time.monotonic())."""
    delay = AUTOMATION_GRACE - (time.monotonic() - since)
    if delay > 0:
        await asyncio.sleep(delay)


def taken_by_automation(agent: Agent, message_id: str) -> bool:
    """Whether something else handled the request: marked processed, or answered. A
    request the agent does not know at all is not taken (the bridge's answer then fails
    and is logged, as for any request it cannot answer)."""
    data = agent.data
    if message_id not in data.inbox.pending:
        return agent.find_request(message_id) is not None
    return any(
        message_id in (reply.source_message_id, reply.reply_to_message_id)
        for reply in data.history.replies
    )
