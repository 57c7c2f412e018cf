"""Cursors of `wait_for_messages`: where a reader stopped in the pending requests.

Pending requests are read in arrival order: by the time they were received, then by the
order they were accepted in (one batch shares its reception time). A cursor names the
last request returned by its reception time and id, so it keeps working after that
request was marked processed. It is opaque to the model (base64url of JSON).
"""

import base64
import binascii
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..client import Request


class CursorError(ValueError):
    """Text that is not a cursor this tool returned."""


@dataclass(frozen=True, slots=True)
class Cursor:
    received_at: float
    message_id: str

    def encode(self) -> str:
        raw = json.dumps([self.received_at, self.message_id], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            value = json.loads(raw)
        except (binascii.Error, ValueError) as err:
            raise CursorError(text) from err
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not isinstance(value[0], int | float)
            or isinstance(value[0], bool)
            or not isinstance(value[1], str)
        ):
            raise CursorError(text)
        return cls(float(value[0]), value[1])

    @classmethod
    def of(cls, request: Request) -> Cursor:
        return cls(request.received_at, request.message_id)


def in_order(requests: Iterable[Request], ranks: dict[str, int]) -> list[Request]:
    return sorted(requests, key=lambda r: (r.received_at, ranks.get(r.message_id, -1)))


def after(
    requests: Sequence[Request], cursor: Cursor | None, ranks: dict[str, int]
) -> list[Request]:
    """The requests (in order) that come after the cursor.

    When the cursor's request is no longer known, requests received at the same instant
    are kept: a reader may see one twice, never miss one.
    """
    if cursor is None:
        return list(requests)
    cursor_rank = ranks.get(cursor.message_id)
    return [
        request
        for request in requests
        if request.received_at > cursor.received_at
        or (
            request.received_at == cursor.received_at
            and request.message_id != cursor.message_id
            and (cursor_rank is None or ranks.get(request.message_id, -1) > cursor_rank)
        )
    ]
