"""Messages the agent refused for good on arrival (gateway_frames.RefusedMessage), counted.

Such a message (over the frame size cap, or with a field that breaks the protocol, such as
a device id that is not canonical) would be refused again at every redelivery, so the agent
acknowledges it (ACK_READ) and the relay stops redelivering it. Its sender learns nothing
(the relay tells them nothing either way) and the message is lost, which it was anyway; the
warning in the log names its id and sender so that the user can ask them to send it again,
smaller. A message is logged at warning once (its id is remembered among the last
MAX_REMEMBERED_REFUSALS), a repeat only at debug. Counted in memory since start, for diagnostics.
"""

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_REMEMBERED_REFUSALS
from .frames import RefusedMessage

_LOGGER = logging.getLogger(__name__)


@dataclass
class GatewayRefusals:
    """Counts of refused messages since the agent started (used on the event loop only)."""

    total: int = 0
    oversized: int = 0
    last_at: float | None = None
    _seen: dict[str, None] = field(default_factory=dict)

    def record(self, message: RefusedMessage) -> None:
        """Count `message` and log it (warning the first time its id is seen)."""
        self.total += 1
        self.oversized += message.oversized
        self.last_at = time.time()
        repeat = message.message_id in self._seen
        self._seen.pop(message.message_id, None)
        self._seen[message.message_id] = None  # re-inserted last: dict order is recency
        while len(self._seen) > MAX_REMEMBERED_REFUSALS:
            del self._seen[next(iter(self._seen))]
        _LOGGER.log(
            logging.DEBUG if repeat else logging.WARNING,
            "Refusing message %s from %s for good (%s; %d characters): acknowledged so that "
            "the relay stops redelivering it",
            message.message_id,
            message.sender_id,
            message.reason,
            message.size,
        )

    def to_json(self) -> dict[str, Any]:
        """For diagnostics: counts and the time of the last one, no id."""
        return {"total": self.total, "oversized": self.oversized, "last_at": self.last_at}
