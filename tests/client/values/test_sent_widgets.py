"""A widget we sent, found again in the history: its newest send, its kind and its spec
as the updates left it; its updates alone when the widget itself left the history."""

import json
from typing import Any

import pytest

from custom_components.pacerelle.client.values.history import History, Reply
from custom_components.pacerelle.client.values.payloads import Content
from custom_components.pacerelle.client.values.sent_widgets import sent_widget, typed_content
from custom_components.pacerelle.client.values.widget_answers import answer_problem, typed_answer
from custom_components.pacerelle.client.values.widgets import (
    WidgetError,
    build_update,
    build_widget,
)


def _sent(message_id: str, payload: dict[str, Any] | str, to_device_id: str = "1") -> Reply:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return Reply(message_id, "c-1", "usr_ana", to_device_id, "widget", text, None, None, 1.0)


def test_the_newest_send_and_the_spec_its_updates_leave() -> None:
    widget = build_widget("progress", {"title": "Backup", "value": 10, "max": 80}, widget_id="w")
    other = build_widget("progress", {"title": "Other", "value": 1, "max": 2}, widget_id="x")
    history = History(
        (),
        (
            _sent("m1", widget),
            _sent("m2", other),
            _sent("m3", "{not json"),
            _sent("m4", "[1, 2]"),
            _sent("m5", build_update("w", {"spec": {"value": 40}}), to_device_id="2"),
            _sent("m6", build_update("x", {"spec": {"value": 2}})),
        ),
    )
    found = sent_widget(history, "w")
    assert found is not None
    assert (found.last.message_id, found.last.to_device_id, found.kind) == ("m5", "2", "progress")
    assert found.spec == {"title": "Backup", "value": 40, "max": 80}
    assert sent_widget(history, "nobody") is None
    assert sent_widget(History(), "w") is None


def test_updates_alone_when_the_widget_left_the_history() -> None:
    history = History((), (_sent("m9", build_update("w", {"spec": {"value": 70}})),))
    found = sent_widget(history, "w")
    assert found is not None
    assert (found.last.message_id, found.kind, dict(found.spec)) == ("m9", None, {"value": 70})


def test_an_update_is_checked_against_the_widget_it_patches() -> None:
    widget = build_widget("progress", {"title": "Backup", "value": 10, "max": 80}, widget_id="w")
    found = sent_widget(History((), (_sent("m1", widget),)), "w")
    assert found is not None
    update = found.update({"spec": {"value": 40}})
    assert (update["type"], update["ref"], update["patch"]) == (
        "widget.update",
        "w",
        {"spec": {"value": 40}},
    )
    with pytest.raises(WidgetError):
        found.update({"spec": {"value": 81}})  # over the widget's max
    earlier = _sent("m9", build_update("w", {"spec": {"value": 70}}))
    alone = sent_widget(History((), (earlier,)), "w")
    assert alone is not None
    assert alone.update({"spec": {"value": 90}})["patch"] == {"spec": {"value": 90}}


def test_deep_nesting_is_text_not_a_fault() -> None:
    deep = "{" + '"a":[' * 100_000 + "]" * 100_000 + "}"
    assert sent_widget(History((), (_sent("m1", deep),)), "w") is None


FORM_SPEC = {
    "title": "Guests",
    "fields": [
        {"name": "who", "label": "Who", "type": "text"},
        {"name": "n", "label": "How many", "type": "number"},
    ],
}


@pytest.mark.parametrize(
    ("given", "typed"),
    [
        ("3", 3),
        (" -2 ", -2),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        (4, 4),
        ("", None),
        ("lots", "lots"),
        ("nan", "nan"),
        ("1_000", "1_000"),
        ("\u0663", "\u0663"),  # an Arabic-Indic digit is no number of the form's
    ],
)
def test_a_forms_number_field_is_typed(given: Any, typed: Any) -> None:
    value = typed_answer("form", FORM_SPEC, {"who": "7", "n": given})
    assert value == {"who": "7", "n": typed}
    assert type(value["n"]) is type(typed)


def test_a_number_field_that_is_no_number_is_refused() -> None:
    assert answer_problem("form", FORM_SPEC, {"n": "3"}) == "field n is not a number"
    assert answer_problem("form", FORM_SPEC, {"n": True}) == "field n is not a number"
    assert answer_problem("form", FORM_SPEC, {"n": float("inf")}) == "field n is not a number"
    assert answer_problem("form", FORM_SPEC, {"n": 3, "who": "7"}) is None
    assert answer_problem("form", FORM_SPEC, {"n": None}) is None


def test_an_answer_is_typed_by_the_widget_it_answers() -> None:
    history = History((), (_sent("m1", build_widget("form", FORM_SPEC, widget_id="w")),))
    answer = {"type": "widget.response", "id": "a", "ref": "w", "value": {"n": "3"}}
    typed = typed_content(Content("widget", "", widget=answer), history)
    assert typed.widget == {**answer, "value": {"n": 3}}
    # A widget no longer in the history: the answer as it came.
    kept = Content("widget", "", widget=answer)
    assert typed_content(kept, History()) is kept
