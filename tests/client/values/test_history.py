"""The history: bounded to the newest MAX_HISTORY_ENTRIES of requests and of replies, a
status or a processing note changes only the entries it names, a conversation's view
keeps its newest, and what is saved reads back."""

from custom_components.pacerelle.client.limits import MAX_HISTORY_ENTRIES
from custom_components.pacerelle.client.values.history import FAILED, SENT, History, Reply
from custom_components.pacerelle.client.values.requests import Request


def request(number: int, conversation: str = "c1") -> Request:
    return Request(f"m{number}", conversation, "ana", "1", "agt", True, "text", "hi", None, 1.0)


def reply(number: int, conversation: str = "c1") -> Reply:
    return Reply(f"r{number}", conversation, "ana", "1", "text", "ok", None, None, float(number))


def test_the_newest_entries_are_kept() -> None:
    history = History()
    for number in range(MAX_HISTORY_ENTRIES + 2):
        history = history.with_request(request(number)).with_reply(reply(number))
    assert len(history.requests) == len(history.replies) == MAX_HISTORY_ENTRIES
    assert history.requests[0].request.message_id == "m2"
    assert history.replies[-1].message_id == f"r{MAX_HISTORY_ENTRIES + 1}"


def test_changes_touch_only_what_they_name() -> None:
    history = History().with_request(request(1)).with_request(request(2))
    history = history.with_reply(reply(1)).with_reply(reply(2))
    changed = history.with_reply_status({"r2"}, FAILED).with_processed("m1", 5.0, "done")
    assert [r.status for r in changed.replies] == [SENT, FAILED]
    assert [(i.processed_at, i.note) for i in changed.requests] == [(5.0, "done"), (None, None)]
    assert History.from_json(changed.to_json()) == changed


def test_a_conversations_view_keeps_its_newest() -> None:
    history = History()
    for number in range(4):
        conversation = "c1" if number % 2 else "c2"
        history = history.with_request(request(number, conversation))
        history = history.with_reply(reply(number, conversation))
    view = history.filtered("c1", 1)
    assert [i.request.message_id for i in view.requests] == ["m3"]
    assert [r.message_id for r in view.replies] == ["r3"]
    assert len(history.filtered(None, 10).requests) == 4
