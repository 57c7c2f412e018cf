"""The queue between the gateway reader and the inbox pipeline, bounded in frames and bytes.

When it is full, `put` waits: the reader stops calling the WebSocket's receive, aiohttp
stops reading the socket once its own small buffer is full, and TCP pushes back on the
relay. Memory stays flat whatever the relay sends (600 frames of ~700 KiB once took Home
Assistant from 225 to 1,221 MiB). Nothing is lost: a frame the relay could not deliver
stays in its queue, unacknowledged, and comes again. While the reader waits, the relay's
pings go unanswered too: if the pipeline stalls long enough for the relay to drop the
connection, the agent reconnects and the relay redelivers (receipts make that harmless).
"""

import asyncio
from collections import deque

from ..limits import MAX_QUEUED_FRAME_BYTES, MAX_QUEUED_FRAMES
from ..relay.frames import InboundMessage

FRAME_OVERHEAD = 1024  # ids and routing fields, counted for every frame however small


def frame_weight(message: InboundMessage) -> int:
    """What a queued message holds in memory, roughly: its payload and descriptors."""
    descriptors = sum(
        len(str(key)) + len(str(value))
        for item in message.attachments
        for key, value in item.items()
    )
    return FRAME_OVERHEAD + len(message.payload) + descriptors


class InboundQueue:
    """A FIFO of incoming messages whose `put` waits while it is full.

    One message is always admitted into an empty queue, whatever its weight, so a frame
    never waits forever. `peak_frames` and `peak_bytes` are the high-water marks.
    """

    def __init__(
        self, max_frames: int = MAX_QUEUED_FRAMES, max_bytes: int = MAX_QUEUED_FRAME_BYTES
    ) -> None:
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self._items: deque[tuple[InboundMessage, int]] = deque()
        self._bytes = 0
        self._changed = asyncio.Condition()
        self.peak_frames = 0
        self.peak_bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def queued_bytes(self) -> int:
        return self._bytes

    async def put(self, message: InboundMessage) -> None:
        """Queue `message`, waiting first while the queue is full."""
        weight = frame_weight(message)
        async with self._changed:
            await self._changed.wait_for(lambda: self._fits(weight))
            self._items.append((message, weight))
            self._bytes += weight
            self.peak_frames = max(self.peak_frames, len(self._items))
            self.peak_bytes = max(self.peak_bytes, self._bytes)
            self._changed.notify_all()

    async def get_batch(self, max_items: int) -> list[InboundMessage]:
        """At least one message (waiting for it), at most `max_items`, in arrival order."""
        async with self._changed:
            await self._changed.wait_for(lambda: bool(self._items))
            batch: list[InboundMessage] = []
            while self._items and len(batch) < max_items:
                message, weight = self._items.popleft()
                self._bytes -= weight
                batch.append(message)
            self._changed.notify_all()
            return batch

    def _fits(self, weight: int) -> bool:
        if not self._items:
            return True
        return len(self._items) < self.max_frames and self._bytes + weight <= self.max_bytes
