"""The inbound queue's bounds: frames and bytes, one frame always admitted, arrival order."""

import asyncio

from custom_components.pacerelle.client.inbox.queue import (
    FRAME_OVERHEAD,
    InboundQueue,
    frame_weight,
)
from custom_components.pacerelle.client.relay.frames import InboundMessage


def _message(number: int, payload_bytes: int = 10) -> InboundMessage:
    return InboundMessage(
        message_id=f"m{number}",
        conversation_id="c1",
        sender_id="u1",
        sender_device_id="1",
        to="a1",
        payload=b"x" * payload_bytes,
        encrypted=True,
        reply_to_message_id=None,
        attachments=(),
        digest=f"d{number}",
    )


async def test_put_waits_while_full_in_frames_then_resumes_in_order() -> None:
    queue = InboundQueue(max_frames=2, max_bytes=10**9)
    await queue.put(_message(0))
    await queue.put(_message(1))
    third = asyncio.create_task(queue.put(_message(2)))
    await asyncio.sleep(0.05)
    assert not third.done()  # the reader would wait here: backpressure
    assert [m.message_id for m in await queue.get_batch(1)] == ["m0"]
    async with asyncio.timeout(1):
        await third
    assert [m.message_id for m in await queue.get_batch(10)] == ["m1", "m2"]
    assert (len(queue), queue.queued_bytes, queue.peak_frames) == (0, 0, 2)


async def test_put_waits_while_full_in_bytes_but_admits_one_frame_into_an_empty_queue() -> None:
    weight = frame_weight(_message(0, payload_bytes=1000))
    assert weight == FRAME_OVERHEAD + 1000
    queue = InboundQueue(max_frames=100, max_bytes=weight + 10)
    await queue.put(_message(0, payload_bytes=1000))
    second = asyncio.create_task(queue.put(_message(1, payload_bytes=1000)))
    await asyncio.sleep(0.05)
    assert not second.done()
    await queue.get_batch(10)
    async with asyncio.timeout(1):
        await second
    huge = InboundQueue(max_frames=100, max_bytes=10)
    async with asyncio.timeout(1):
        await huge.put(_message(2, payload_bytes=5000))  # over the bound, but alone: admitted
    assert huge.peak_bytes > huge.max_bytes
    assert queue.peak_bytes <= queue.max_bytes
