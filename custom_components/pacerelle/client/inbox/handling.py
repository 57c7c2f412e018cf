"""What the host does with a request once handed over: mark it processed, checkpoint it."""

import time
from dataclasses import replace

from ..agent_core import AgentCore
from ..errors import SendError, SendRefusal
from ..limits import MAX_NOTE_CHARS
from ..values.checkpoints import Checkpoint, check_fields
from ..values.requests import Request


async def mark_processed(core: AgentCore, message_id: str, note: str | None) -> Request:
    """Move a pending request to the history as processed (with the host's note)."""
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise SendError(SendRefusal.NOTE_TOO_LONG, f"over {MAX_NOTE_CHARS} characters")
    async with core.lock:
        request = core.data.inbox.pending.get(message_id)
        if request is None:
            raise SendError(SendRefusal.UNKNOWN_REQUEST, message_id)
        data = core.data
        await core.commit(
            replace(
                data,
                inbox=data.inbox.processed(message_id),
                history=data.history.with_processed(message_id, core.now(), note),
            )
        )
    core.hooks.status_changed()
    return request


async def save_checkpoint(
    core: AgentCore,
    source_message_id: str,
    request: Request | None,
    summary: str,
    next_action: str,
    host_session_label: str | None,
    status: str,
) -> Checkpoint:
    """Save where the host is with a request (fields checked first, nothing saved if bad)."""
    check_fields(summary, next_action, host_session_label, status)
    checkpoint = Checkpoint(
        source_message_id,
        request.conversation_id if request else None,
        summary,
        next_action,
        host_session_label,
        status,
        time.time(),
    )
    async with core.lock:
        data = core.data
        await core.commit(replace(data, checkpoints=data.checkpoints.with_checkpoint(checkpoint)))
    return checkpoint
