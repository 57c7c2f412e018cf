"""Store migration 1 -> 2 on hand-made documents: which ids tell an ambiguous version-1
session name apart (the installation's conversation, stored requests), what is left alone
(documents without sessions, names of another form), and last_used following the renames."""

import logging
from typing import Any

import pytest

from custom_components.pacerelle.client.state.versions import migrate

AMBIGUOUS = "human:a:b:c:device:1"  # ("a:b", "c") or ("a", "b:c")
AS_A_B_IN_C = "human:a%3Ab:c:device:1"
AS_A_IN_B_C = "human:a:b%3Ac:device:1"


def _document(**sections: Any) -> dict[str, Any]:
    return {"version": 1, "signal": {"sessions": {AMBIGUOUS: {"r": 1}}}} | sections


@pytest.mark.parametrize("signal", [None, "text", {"sessions": ["not", "a", "mapping"]}])
def test_a_document_without_sessions_only_gets_the_new_version(signal: object) -> None:
    document = {"version": 1, "signal": signal, "other": {"kept": True}}
    migrated = migrate(dict(document))
    assert migrated == document | {"version": 2}


def test_the_installations_conversation_tells_the_reading() -> None:
    migrated = migrate(_document(installation={"conversation_id": "c"}))
    assert list(migrated["signal"]["sessions"]) == [AS_A_B_IN_C]
    migrated = migrate(_document(installation={"conversation_id": "b:c"}))
    assert list(migrated["signal"]["sessions"]) == [AS_A_IN_B_C]


@pytest.mark.parametrize(
    ("inbox", "history"),
    [
        ({"pending": [{"sender_id": "a", "conversation_id": "b:c"}]}, {}),
        ({"received": [{"request": {"sender_id": "a", "conversation_id": "b:c"}}]}, {}),
        ({}, {"requests": [{"request": {"sender_id": "a", "conversation_id": "b:c"}}]}),
    ],
)
def test_a_stored_request_tells_the_reading(inbox: dict[str, Any], history: dict[str, Any]) -> None:
    migrated = migrate(_document(inbox=inbox, history=history))
    assert list(migrated["signal"]["sessions"]) == [AS_A_IN_B_C]


def test_requests_with_ids_that_are_not_text_tell_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inbox = {"pending": [{"sender_id": 7, "conversation_id": "b:c"}, "junk"]}
    with caplog.at_level(logging.WARNING):
        migrated = migrate(_document(inbox=inbox))
    assert migrated["signal"]["sessions"] == {}
    assert AMBIGUOUS in caplog.text


def test_names_of_another_form_stay_and_last_used_follows_the_renames() -> None:
    document = {
        "version": 1,
        "installation": {"conversation_id": "c"},
        "signal": {
            "sessions": {AMBIGUOUS: {"r": 1}, "agent:x": {"r": 2}, "human:u:v:device:2": {"r": 3}},
            "last_used": {AMBIGUOUS: 5, "agent:x": 6, "human:u:v:device:2": 7, "gone": 8},
        },
    }
    migrated = migrate(document)
    assert migrated["signal"]["sessions"] == {
        AS_A_B_IN_C: {"r": 1},
        "agent:x": {"r": 2},
        "human:u:v:device:2": {"r": 3},
    }
    assert migrated["signal"]["last_used"] == {
        AS_A_B_IN_C: 5,
        "agent:x": 6,
        "human:u:v:device:2": 7,
    }
