"""widget.standard v1: every kind accepted when right, refused with the field's path when wrong."""

from typing import Any

import pytest

from custom_components.pacerelle.client.limits import MAX_WIDGET_OPTIONS, MAX_WIDGET_TITLE_CHARS
from custom_components.pacerelle.client.values.widget_answers import (
    answer_problem,
    parse_response,
)
from custom_components.pacerelle.client.values.widgets import (
    KINDS,
    WidgetError,
    build_update,
    build_widget,
    check_patch,
    check_widget,
)
from tests.helpers.widget_specs import GOOD_SPECS, widget


def test_every_kind_has_a_good_example() -> None:
    assert set(GOOD_SPECS) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_good_widgets_pass_unchanged(kind: str) -> None:
    payload = widget(kind, GOOD_SPECS[kind], expires_at="2026-12-01T10:00:00Z")
    assert check_widget(payload) == payload


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("confirm", {}, "spec.title"),
    ("confirm", {"title": " "}, "spec.title"),
    ("confirm", {"title": "x" * (MAX_WIDGET_TITLE_CHARS + 1)}, "spec.title"),
    ("confirm", {"title": "t", "danger": "yes"}, "spec.danger"),
    ("confirm", {"title": "t", "labels": {"maybe": "?"}}, "spec.labels.maybe"),
    ("confirm", {"title": "t", "options": []}, "spec.options"),
    ("choice", {"title": "t"}, "spec.options"),
    ("choice", {"title": "t", "options": []}, "spec.options"),
    ("choice", {"title": "t", "options": [{"id": "a"}]}, "spec.options[0].label"),
    (
        "choice",
        {"title": "t", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]},
        "spec.options[1].id",
    ),
    (
        "choice",
        {
            "title": "t",
            "options": [{"id": str(i), "label": "x"} for i in range(MAX_WIDGET_OPTIONS + 1)],
        },
        "spec.options",
    ),
    ("choice", {"title": "t", "options": [{"id": "a", "label": "A"}], "multi": 1}, "spec.multi"),
    ("permission", {"title": "t", "scopes": "camera"}, "spec.scopes"),
    ("permission", {"title": "t", "scopes": ["a", "a"]}, "spec.scopes[1]"),
    ("form", {"title": "t", "fields": []}, "spec.fields"),
    (
        "form",
        {"title": "t", "fields": [{"name": "1x", "label": "L", "type": "text"}]},
        "spec.fields[0].name",
    ),
    (
        "form",
        {"title": "t", "fields": [{"name": "x", "label": "L", "type": "color"}]},
        "spec.fields[0].type",
    ),
    ("form", {"title": "t", "fields": [{"name": "x", "label": "L"}]}, "spec.fields[0].type"),
    (
        "form",
        {
            "title": "t",
            "fields": [
                {"name": "x", "label": "L", "type": "text"},
                {"name": "x", "label": "M", "type": "text"},
            ],
        },
        "spec.fields[1].name",
    ),
    ("progress", {"title": "t"}, "spec.value"),
    ("progress", {"title": "t", "value": True}, "spec.value"),
    ("progress", {"title": "t", "value": -1}, "spec.value"),
    ("progress", {"title": "t", "value": 101}, "spec.value"),
    ("progress", {"title": "t", "value": 5, "max": 0}, "spec.max"),
    ("progress", {"title": "t", "value": float("nan")}, "spec.value"),
    ("file-picker", {"title": "t", "accept": ["not a type"]}, "spec.accept[0]"),
    ("file-picker", {"title": "t", "maxFiles": 0}, "spec.maxFiles"),
    ("file-picker", {"title": "t", "maxFiles": 3, "multiple": False}, "spec.maxFiles"),
    ("datetime", {"title": "t"}, "spec.mode"),
    ("datetime", {"title": "t", "mode": "week"}, "spec.mode"),
    ("datetime", {"title": "t", "mode": "date", "min": "tomorrow"}, "spec.min"),
    ("datetime", {"title": "t", "mode": "time", "min": "10:00", "max": "09:00"}, "spec.max"),
]


@pytest.mark.parametrize(("kind", "spec", "path"), BAD)
def test_bad_specs_name_the_field(kind: str, spec: dict[str, Any], path: str) -> None:
    with pytest.raises(WidgetError) as caught:
        check_widget(widget(kind, spec))
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({**widget("confirm", {"title": "t"}), "type": "widget.update"}, "type"),
        ({**widget("confirm", {"title": "t"}), "v": 2}, "v"),
        ({**widget("confirm", {"title": "t"}), "v": True}, "v"),
        ({**widget("confirm", {"title": "t"}), "id": ""}, "id"),
        ({**widget("confirm", {"title": "t"}), "kind": "slider"}, "kind"),
        ({**widget("confirm", {"title": "t"}), "extra": 1}, "widget.extra"),
        (widget("confirm", ["title"]), "spec"),
        (widget("confirm", {"title": "t"}, expires_at="2026-12-01 10:00"), "expires_at"),
        (widget("confirm", {"title": "t"}, expires_at="soon"), "expires_at"),
        (widget("confirm", {"title": "t"}, response_mode="all"), "response_mode"),
        ("not an object", "widget"),
    ],
)
def test_bad_envelopes_name_the_field(payload: Any, path: str) -> None:
    with pytest.raises(WidgetError) as caught:
        check_widget(payload)
    assert caught.value.path == path


def test_build_widget_makes_an_id_and_checks() -> None:
    built = build_widget("confirm", {"title": "Unlock?"}, response_mode="collective")
    assert built["type"] == "widget.standard"
    assert built["v"] == 1
    assert len(built["id"]) == 36
    with pytest.raises(WidgetError):
        build_widget("confirm", {"title": ""})


def test_patches_merge_with_the_known_spec() -> None:
    spec = GOOD_SPECS["progress"]
    assert check_patch("progress", spec, {"spec": {"value": 80}}) == {"spec": {"value": 80}}
    with pytest.raises(WidgetError) as caught:
        check_patch("progress", spec, {"spec": {"value": 81}})
    assert caught.value.path == "patch.spec.value"
    with pytest.raises(WidgetError) as caught:
        check_patch("confirm", {"title": "t"}, {"spec": {"options": []}})
    assert caught.value.path == "patch.spec.options"


def test_patches_of_unknown_widgets_are_checked_field_by_field() -> None:
    assert check_patch(None, None, {"spec": {"max": "2026-01-01"}})
    assert check_patch(None, None, {"expires_at": "2026-12-01T10:00:00+01:00"})
    for patch, path in [
        ({}, "patch"),
        ({"spec": {}}, "patch.spec"),
        ({"spec": {"value": "half"}}, "patch.spec.value"),
        ({"spec": {"colour": "red"}}, "patch.spec.colour"),
        ({"expires_at": "later"}, "patch.expires_at"),
        ({"title": "t"}, "patch.title"),
    ]:
        with pytest.raises(WidgetError) as caught:
            check_patch(None, None, patch)
        assert caught.value.path == path


def test_build_update() -> None:
    update = build_update("w1", {"spec": {"value": 3}})
    assert update["type"] == "widget.update"
    assert update["ref"] == "w1"
    assert update["patch"] == {"spec": {"value": 3}}
    assert update["id"] != "w1"


def test_parse_response() -> None:
    answer = parse_response({"type": "widget.response", "id": "r", "ref": "w", "value": True})
    assert answer is not None
    assert (answer.ref, answer.value, answer.cancelled) == ("w", True, False)
    cancelled = parse_response(
        {"type": "widget.response", "id": "r", "ref": "w", "cancelled": True}
    )
    assert cancelled is not None
    assert cancelled.cancelled
    assert cancelled.value is None
    for bad in [
        None,
        {"type": "widget.update", "id": "r", "ref": "w"},
        {"type": "widget.response", "id": "r"},
        {"type": "widget.response", "id": "", "ref": "w"},
        {"type": "widget.response", "id": "r", "ref": "w", "cancelled": "yes"},
    ]:
        assert parse_response(bad) is None


@pytest.mark.parametrize(
    ("kind", "spec", "value", "fits"),
    [
        ("confirm", GOOD_SPECS["confirm"], True, True),
        ("confirm", GOOD_SPECS["confirm"], "yes", False),
        ("permission", GOOD_SPECS["permission"], False, True),
        ("permission", GOOD_SPECS["permission"], 1, False),
        ("choice", GOOD_SPECS["choice"], "a", True),
        ("choice", GOOD_SPECS["choice"], "z", False),
        ("choice", GOOD_SPECS["choice"], ["a"], False),
        ("choice", {**GOOD_SPECS["choice"], "multi": True}, ["a", "b"], True),
        ("choice", {**GOOD_SPECS["choice"], "multi": True}, [], True),
        ("choice", {**GOOD_SPECS["choice"], "multi": True}, ["a", "z"], False),
        ("choice", {**GOOD_SPECS["choice"], "multi": True}, "a", False),
        ("form", GOOD_SPECS["form"], {"name": "Ann"}, True),
        ("form", GOOD_SPECS["form"], {"name": ""}, False),
        ("form", GOOD_SPECS["form"], {}, False),
        ("form", GOOD_SPECS["form"], {"name": "Ann", "age": "3"}, False),
        ("form", GOOD_SPECS["form"], {"name": ["Ann"]}, False),
        ("form", GOOD_SPECS["form"], "Ann", False),
        ("datetime", GOOD_SPECS["datetime"], "2026-05-01", True),
        ("datetime", GOOD_SPECS["datetime"], "May 1st", False),
        ("datetime", {"title": "t", "mode": "datetime"}, "2026-05-01T10:30", True),
        ("datetime", {"title": "t", "mode": "time"}, "10:30", True),
        ("datetime", {"title": "t", "mode": "time"}, 1030, False),
        ("progress", GOOD_SPECS["progress"], None, True),
    ],
)
def test_answers_fit_their_widget(kind: str, spec: dict[str, Any], value: Any, fits: bool) -> None:
    assert (answer_problem(kind, spec, value) is None) is fits
