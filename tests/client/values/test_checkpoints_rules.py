"""Checkpoints: field limits, the cap's eviction order, listing filters and the JSON round trip."""

import pytest

from custom_components.pacerelle.client.limits import (
    MAX_CHECKPOINT_LABEL_CHARS,
    MAX_CHECKPOINT_TEXT_CHARS,
    MAX_CHECKPOINTS,
)
from custom_components.pacerelle.client.values.checkpoints import (
    Checkpoint,
    Checkpoints,
    CheckpointStatus,
    check_fields,
)


def _checkpoint(
    source: str, status: str = CheckpointStatus.ACTIVE, conversation: str | None = "c-1"
) -> Checkpoint:
    return Checkpoint(source, conversation, "did a thing", "do the next", None, status, 1.0)


def test_fields_within_limits_pass() -> None:
    check_fields(
        "s" * MAX_CHECKPOINT_TEXT_CHARS,
        "n" * MAX_CHECKPOINT_TEXT_CHARS,
        "l" * MAX_CHECKPOINT_LABEL_CHARS,
        CheckpointStatus.ACTIVE,
    )
    check_fields("s", "n", None, CheckpointStatus.COMPLETED)


@pytest.mark.parametrize(
    ("summary", "next_action", "label", "status", "complaint"),
    [
        ("", "n", None, CheckpointStatus.ACTIVE, "summary"),
        ("s" * (MAX_CHECKPOINT_TEXT_CHARS + 1), "n", None, CheckpointStatus.ACTIVE, "summary"),
        ("s", "", None, CheckpointStatus.ACTIVE, "next_action"),
        ("s", "n" * (MAX_CHECKPOINT_TEXT_CHARS + 1), None, CheckpointStatus.ACTIVE, "next_action"),
        (
            "s",
            "n",
            "l" * (MAX_CHECKPOINT_LABEL_CHARS + 1),
            CheckpointStatus.ACTIVE,
            "host_session_label",
        ),
        ("s", "n", None, "paused", "status"),
    ],
)
def test_fields_over_limits_are_refused(
    summary: str, next_action: str, label: str | None, status: str, complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        check_fields(summary, next_action, label, status)


def test_saving_again_replaces_and_moves_to_the_end() -> None:
    book = Checkpoints().with_checkpoint(_checkpoint("m-1")).with_checkpoint(_checkpoint("m-2"))
    book = book.with_checkpoint(_checkpoint("m-1", CheckpointStatus.COMPLETED))
    assert list(book.items) == ["m-2", "m-1"]
    assert book.items["m-1"].status == CheckpointStatus.COMPLETED


def test_past_the_cap_completed_ones_go_first_then_the_oldest() -> None:
    book = Checkpoints()
    book = book.with_checkpoint(_checkpoint("first-active"))
    book = book.with_checkpoint(_checkpoint("done-1", CheckpointStatus.COMPLETED))
    for index in range(MAX_CHECKPOINTS - 2):
        book = book.with_checkpoint(_checkpoint(f"m-{index}"))
    book = book.with_checkpoint(_checkpoint("done-2", CheckpointStatus.COMPLETED))
    assert len(book.items) == MAX_CHECKPOINTS
    assert "done-1" not in book.items  # the completed one went, not the older active one
    assert "first-active" in book.items
    book = book.with_checkpoint(_checkpoint("one-more"))
    assert "done-2" not in book.items
    book = book.with_checkpoint(_checkpoint("and-another"))
    assert len(book.items) == MAX_CHECKPOINTS
    assert "first-active" not in book.items  # no completed left: the oldest goes
    assert "and-another" in book.items


def test_listing_filters_by_status_and_conversation() -> None:
    book = Checkpoints()
    for checkpoint in (
        _checkpoint("a", CheckpointStatus.ACTIVE, "c-1"),
        _checkpoint("b", CheckpointStatus.COMPLETED, "c-1"),
        _checkpoint("c", CheckpointStatus.ACTIVE, "c-2"),
        _checkpoint("d", CheckpointStatus.ACTIVE, None),
    ):
        book = book.with_checkpoint(checkpoint)
    assert [c.source_message_id for c in book.listed(None, False)] == ["a", "c", "d"]
    assert [c.source_message_id for c in book.listed(None, True)] == ["a", "b", "c", "d"]
    assert [c.source_message_id for c in book.listed("c-1", True)] == ["a", "b"]
    assert [c.source_message_id for c in book.listed("c-1", False)] == ["a"]


def test_json_round_trip_keeps_everything_in_order() -> None:
    book = Checkpoints().with_checkpoint(_checkpoint("x", CheckpointStatus.COMPLETED, None))
    book = book.with_checkpoint(
        Checkpoint("y", "c-9", "sum", "next", "label", CheckpointStatus.ACTIVE, 2.5)
    )
    again = Checkpoints.from_json(book.to_json())
    assert again == book
    assert list(again.items) == ["x", "y"]


def test_json_missing_a_field_is_refused() -> None:
    data = _checkpoint("x").to_json()
    del data["next_action"]
    with pytest.raises(KeyError):
        Checkpoints.from_json([data])
