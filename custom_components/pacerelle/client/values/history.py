"""Recent requests and replies kept locally (the last MAX_HISTORY_ENTRIES of each).

A reply's status says what we know of its delivery: "sent" (written on an open connection
that then stayed up for the confirmation window, or not yet known otherwise), "uncertain"
(the connection dropped inside that window: the relay may or may not have it) and "failed"
(the relay answered with an ERROR naming it). See outbox.py.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..limits import MAX_HISTORY_ENTRIES
from .requests import Request

SENT = "sent"
UNCERTAIN = "uncertain"
FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Reply:
    message_id: str
    conversation_id: str
    to: str
    to_device_id: str | None
    kind: str
    text: str
    reply_to_message_id: str | None
    source_message_id: str | None
    sent_at: float
    status: str = SENT

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "conversation_id": self.conversation_id,
            "to": self.to,
            "to_device_id": self.to_device_id,
            "kind": self.kind,
            "text": self.text,
            "reply_to_message_id": self.reply_to_message_id,
            "source_message_id": self.source_message_id,
            "sent_at": self.sent_at,
            "status": self.status,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class HandledRequest:
    request: Request
    processed_at: float | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request.to_json(),
            "processed_at": self.processed_at,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HandledRequest:
        return cls(Request.from_json(data["request"]), data["processed_at"], data["note"])


@dataclass(frozen=True, slots=True)
class History:
    requests: tuple[HandledRequest, ...] = field(default=())
    replies: tuple[Reply, ...] = field(default=())

    def with_request(self, request: Request) -> History:
        return replace(
            self, requests=(*self.requests, HandledRequest(request))[-MAX_HISTORY_ENTRIES:]
        )

    def with_processed(self, message_id: str, at: float, note: str | None) -> History:
        requests = tuple(
            replace(item, processed_at=at, note=note)
            if item.request.message_id == message_id
            else item
            for item in self.requests
        )
        return replace(self, requests=requests)

    def with_reply(self, reply: Reply) -> History:
        return replace(self, replies=(*self.replies, reply)[-MAX_HISTORY_ENTRIES:])

    def with_reply_status(self, message_ids: set[str], status: str) -> History:
        replies = tuple(
            replace(reply, status=status) if reply.message_id in message_ids else reply
            for reply in self.replies
        )
        return replace(self, replies=replies)

    def filtered(self, conversation_id: str | None, limit: int) -> History:
        """The newest `limit` of each, optionally of one conversation."""
        requests = [
            item
            for item in self.requests
            if conversation_id is None or item.request.conversation_id == conversation_id
        ]
        replies = [
            reply
            for reply in self.replies
            if conversation_id is None or reply.conversation_id == conversation_id
        ]
        return History(tuple(requests[-limit:]), tuple(replies[-limit:]))

    def for_host(self) -> History:
        """The history as the host is given it (each request's `Request.for_host`)."""
        requests = tuple(replace(item, request=item.request.for_host()) for item in self.requests)
        return replace(self, requests=requests)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": [item.to_json() for item in self.requests],
            "replies": [reply.to_json() for reply in self.replies],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> History:
        return cls(
            tuple(HandledRequest.from_json(item) for item in data["requests"]),
            tuple(Reply.from_json(item) for item in data["replies"]),
        )
