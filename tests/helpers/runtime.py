"""Waiting for a condition owned by other tasks (never a fixed sleep)."""

import asyncio
from collections.abc import Callable


async def wait_until(condition: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polls state owned by other tasks
            await asyncio.sleep(0.01)
