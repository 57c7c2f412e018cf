"""Checkpoints (as Pacerelle's MCP server has): progress saved on a request, for later work."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..limits import MAX_CHECKPOINT_LABEL_CHARS, MAX_CHECKPOINT_TEXT_CHARS, MAX_CHECKPOINTS


class CheckpointStatus(StrEnum):
    ACTIVE = "active"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    source_message_id: str
    conversation_id: str | None
    summary: str
    next_action: str
    host_session_label: str | None
    status: str
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Checkpoint:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


def check_fields(summary: str, next_action: str, label: str | None, status: str) -> None:
    """ValueError for text over the limits or an unknown status."""
    if not summary or len(summary) > MAX_CHECKPOINT_TEXT_CHARS:
        raise ValueError(f"summary must have 1 to {MAX_CHECKPOINT_TEXT_CHARS} characters")
    if not next_action or len(next_action) > MAX_CHECKPOINT_TEXT_CHARS:
        raise ValueError(f"next_action must have 1 to {MAX_CHECKPOINT_TEXT_CHARS} characters")
    if label is not None and len(label) > MAX_CHECKPOINT_LABEL_CHARS:
        raise ValueError(
            f"host_session_label must have at most {MAX_CHECKPOINT_LABEL_CHARS} characters"
        )
    if status not in (CheckpointStatus.ACTIVE, CheckpointStatus.COMPLETED):
        raise ValueError("status must be active or completed")


@dataclass(frozen=True, slots=True)
class Checkpoints:
    items: Mapping[str, Checkpoint] = field(default_factory=dict)

    def with_checkpoint(self, checkpoint: Checkpoint) -> Checkpoints:
        """Save (or replace) a checkpoint; past the cap, completed ones go first, oldest first."""
        items = {k: v for k, v in self.items.items() if k != checkpoint.source_message_id}
        items[checkpoint.source_message_id] = checkpoint
        while len(items) > MAX_CHECKPOINTS:
            victims = [
                k for k, v in items.items() if v.status == CheckpointStatus.COMPLETED
            ] or list(items)
            del items[victims[0]]
        return Checkpoints(items)

    def listed(self, conversation_id: str | None, include_completed: bool) -> list[Checkpoint]:
        return [
            item
            for item in self.items.values()
            if (include_completed or item.status == CheckpointStatus.ACTIVE)
            and (conversation_id is None or item.conversation_id == conversation_id)
        ]

    def to_json(self) -> list[dict[str, Any]]:
        return [item.to_json() for item in self.items.values()]

    @classmethod
    def from_json(cls, data: list[Any]) -> Checkpoints:
        return cls({item["source_message_id"]: Checkpoint.from_json(item) for item in data})
