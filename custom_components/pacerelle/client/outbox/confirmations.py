"""What confirms a send, and which sends are uncertain.

The gateway has no per-message receipt for what an agent sends. Our rule:
- a send is *refused* (never written) when no connection is open or the WebSocket write
  fails: it is then queued for the next connection (values/send_queue.py), or an error for the
  caller who asked for no queueing (`expire_after=0`) or whose queue is full;
- a written send is *confirmed* once the connection it was written on has stayed open for
  CONFIRM_WINDOW seconds after the write without the relay answering `ERROR` for its id
  (the relay reads frames in order and refuses at once), or when we close that connection
  ourselves with a clean close handshake (the relay has read everything before it);
- it is *uncertain* when that connection ends any other way inside the window (dropped,
  expired, closed by the relay): the relay may or may not have it. Uncertain sends are
  counted and kept (never resent: a second copy could reach the user twice);
- it has *failed* when the relay answers `ERROR` naming its id.
"""

from dataclasses import dataclass

from ..limits import CONFIRM_WINDOW


@dataclass(frozen=True, slots=True)
class Written:
    message_id: str
    conversation_id: str
    connection: int
    at: float


class Outbox:
    """Written sends awaiting confirmation (in memory: a restart is a clean close)."""

    def __init__(self) -> None:
        self._written: dict[str, Written] = {}

    def written(self, send: Written) -> None:
        self._written[send.message_id] = send

    def settle(self, now: float) -> None:
        """Confirm sends whose window passed on a connection still open."""
        for message_id, send in list(self._written.items()):
            if now - send.at >= CONFIRM_WINDOW:
                del self._written[message_id]

    def failed(self, message_id: str) -> Written | None:
        return self._written.pop(message_id, None)

    def connection_ended(self, connection: int, now: float, *, clean: bool) -> list[Written]:
        """The sends of that connection that became uncertain (none for a clean close)."""
        ended = [send for send in self._written.values() if send.connection == connection]
        for send in ended:
            del self._written[send.message_id]
        if clean:
            return []
        return [send for send in ended if now - send.at < CONFIRM_WINDOW]
