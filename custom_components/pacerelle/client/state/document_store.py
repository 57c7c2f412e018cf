"""A store that writes the whole document at each commit (encrypted_file.py's format).

The writer of earlier versions' single `.enc` file, kept for hosts without a per-record
store (tests, tools): each commit builds the document within the store's bounds in the
executor and `save`s it whole. A document the writer finds too large to load
(DocumentTooLargeError) is shrunk again (store_bounds.shrink), up to MAX_DOCUMENT_SHRINKS times, so
a save never fails for its size alone. Each save is durable when it returns.
"""

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from ..agent_core import BlockingRunner, Bound
from ..limits import MAX_DOCUMENT_SHRINKS
from ..store_bounds import shrink
from ..values.agent_data import AgentData
from .errors import DocumentTooLargeError

type Save = Callable[[dict[str, Any]], Awaitable[None]]


def _document(extra: dict[str, Any], data: AgentData) -> dict[str, Any]:
    """The whole store document: the integration's keys and the runtime's sections."""
    return {**extra, **data.sections()}


def _bounded_document(
    extra: dict[str, Any], data: AgentData, bound: Bound | None
) -> tuple[AgentData, dict[str, Any]]:
    """`data` within bounds and its document: one executor job (each hop costs latency)."""
    if bound is not None:
        data = bound(data)
    return data, _document(extra, data)


def _no_mark(_mark: str, _trusted: bool) -> None:
    return None


class DocumentStore:
    """Commits through `save` (a whole document); marks kept by `mark`, if given, else
    only with the documents saved."""

    def __init__(
        self,
        save: Save,
        run_blocking: BlockingRunner,
        *,
        mark: Callable[[str, bool], None] = _no_mark,
    ) -> None:
        self._save = save
        self._run = run_blocking
        self.mark = mark

    async def commit(
        self, extra: dict[str, Any], data: AgentData, bound: Bound | None = None
    ) -> AgentData:
        data, document = await self._run(partial(_bounded_document, extra, data, bound))
        for attempt in range(MAX_DOCUMENT_SHRINKS + 1):
            try:
                await self._save(document)
            except DocumentTooLargeError as err:
                if attempt == MAX_DOCUMENT_SHRINKS:
                    raise
                data = await self._run(partial(shrink, data, err.excess))
                document = await self._run(partial(_document, extra, data))
            else:
                break
        return data
