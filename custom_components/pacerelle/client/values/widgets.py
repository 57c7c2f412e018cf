"""Pacerelle's standard widgets (v1): strict checks of what we send.

A widget is `{"type": "widget.standard", "v": 1, "id", "kind", "spec", "expires_at"?,
"response_mode"?}`; an update `{"type": "widget.update", "v": 1, "id", "ref", "patch":
{"spec"?, "expires_at"?}}` whose spec is merged key by key into the widget's (as the apps
do). Answers are in widget_answers.py.
Every spec field has one rule whatever the kind; each kind says which fields it takes and
which it needs. Anything else is refused with the path of the offending field, so a user
sees "spec.options[2].id: repeated" instead of a widget the app cannot draw.
"""

import math
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from typing import Any, Final

from ..errors import ErrorKind, PacerelleError
from ..limits import (
    MAX_WIDGET_ACCEPT,
    MAX_WIDGET_BODY_CHARS,
    MAX_WIDGET_BUTTON_CHARS,
    MAX_WIDGET_FIELDS,
    MAX_WIDGET_FILES,
    MAX_WIDGET_ID_CHARS,
    MAX_WIDGET_LABEL_CHARS,
    MAX_WIDGET_OPTIONS,
    MAX_WIDGET_SCOPES,
    MAX_WIDGET_TITLE_CHARS,
)

WIDGET_STANDARD: Final = "widget.standard"
WIDGET_UPDATE: Final = "widget.update"
WIDGET_RESPONSE: Final = "widget.response"
WIDGET_VERSION: Final = 1

DEFAULT_PROGRESS_MAX: Final = 100

CONFIRM: Final = "confirm"
CHOICE: Final = "choice"
PERMISSION: Final = "permission"
FORM: Final = "form"
PROGRESS: Final = "progress"
FILE_PICKER: Final = "file-picker"
DATETIME: Final = "datetime"
KINDS: Final = (CONFIRM, CHOICE, PERMISSION, FORM, PROGRESS, FILE_PICKER, DATETIME)
# Kinds that ask the person something (a progress bar only informs).
QUESTION_KINDS: Final = (CONFIRM, CHOICE, PERMISSION, FORM, DATETIME, FILE_PICKER)
ASKABLE_KINDS: Final = (CONFIRM, CHOICE, FORM, DATETIME, PERMISSION)
"""The questions a host may ask and wait for: each answered by a value (a file picker's answer
is files, which no waiting caller can take)."""

INDIVIDUAL: Final = "individual"  # every member answers (values/question.py)
COLLECTIVE: Final = "collective"  # the first member who answers settles it
RESPONSE_MODES: Final = (INDIVIDUAL, COLLECTIVE)
FIELD_TYPES: Final = (
    "text",
    "textarea",
    "number",
    "email",
    "password",
    "url",
    "tel",
    "date",
    "time",
)
DATETIME_MODES: Final = ("date", "time", "datetime")
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_ACCEPT = re.compile(r"^(\.[A-Za-z0-9]{1,16}|[a-z]+/([a-z0-9.+-]+|\*))$")


class WidgetError(PacerelleError, ValueError):
    """A widget, update or answer that breaks the rules; `path` names the field."""

    kind = ErrorKind.INVALID_WIDGET

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


# Field rules: each takes (path, value) and raises WidgetError.

type Rule = Callable[[str, Any], None]


def _text(limit: int, *, empty: bool = False) -> Rule:
    def check(path: str, value: Any) -> None:
        if not isinstance(value, str):
            raise WidgetError(path, "must be text")
        if not value.strip() and not empty:
            raise WidgetError(path, "must not be empty")
        if len(value) > limit:
            raise WidgetError(path, f"longer than {limit} characters")

    return check


def _flag(path: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise WidgetError(path, "must be true or false")


def _number(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise WidgetError(path, "must be a finite number")
    return float(value)


def _non_negative(path: str, value: Any) -> None:
    if _number(path, value) < 0:
        raise WidgetError(path, "must not be negative")


def _positive(path: str, value: Any) -> None:
    if _number(path, value) <= 0:
        raise WidgetError(path, "must be above zero")


def _items(path: str, value: Any, limit: int, *, minimum: int = 1) -> list[Any]:
    if not isinstance(value, list):
        raise WidgetError(path, "must be a list")
    if not minimum <= len(value) <= limit:
        raise WidgetError(path, f"must hold {minimum} to {limit} items")
    return value


def _object(path: str, value: Any, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise WidgetError(path, "must be an object")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise WidgetError(f"{path}.{unknown[0]}", "is not a field of this object")
    return value


def _unique(path: str, seen: set[str], value: str) -> None:
    if value in seen:
        raise WidgetError(path, "repeated")
    seen.add(value)


def _labels(path: str, value: Any) -> None:
    labels = _object(path, value, ("yes", "no"))
    for name, label in labels.items():
        _text(MAX_WIDGET_BUTTON_CHARS)(f"{path}.{name}", label)


def _options(path: str, value: Any) -> None:
    seen: set[str] = set()
    for index, item in enumerate(_items(path, value, MAX_WIDGET_OPTIONS)):
        where = f"{path}[{index}]"
        option = _object(where, item, ("id", "label"))
        for name in ("id", "label"):
            if name not in option:
                raise WidgetError(f"{where}.{name}", "is required")
        _text(MAX_WIDGET_ID_CHARS)(f"{where}.id", option["id"])
        _text(MAX_WIDGET_LABEL_CHARS)(f"{where}.label", option["label"])
        _unique(f"{where}.id", seen, option["id"])


def _scopes(path: str, value: Any) -> None:
    seen: set[str] = set()
    for index, item in enumerate(_items(path, value, MAX_WIDGET_SCOPES)):
        _text(MAX_WIDGET_LABEL_CHARS)(f"{path}[{index}]", item)
        _unique(f"{path}[{index}]", seen, item)


def _fields(path: str, value: Any) -> None:
    seen: set[str] = set()
    for index, item in enumerate(_items(path, value, MAX_WIDGET_FIELDS)):
        where = f"{path}[{index}]"
        field = _object(where, item, ("name", "label", "type", "required"))
        for name in ("name", "label", "type"):
            if name not in field:
                raise WidgetError(f"{where}.{name}", "is required")
        if not isinstance(field["name"], str) or not _FIELD_NAME.match(field["name"]):
            raise WidgetError(f"{where}.name", "must be a short identifier (letters, digits, _)")
        _unique(f"{where}.name", seen, field["name"])
        _text(MAX_WIDGET_LABEL_CHARS)(f"{where}.label", field["label"])
        if field["type"] not in FIELD_TYPES:
            raise WidgetError(f"{where}.type", f"must be one of {', '.join(FIELD_TYPES)}")
        if "required" in field:
            _flag(f"{where}.required", field["required"])


def _accept(path: str, value: Any) -> None:
    for index, item in enumerate(_items(path, value, MAX_WIDGET_ACCEPT)):
        if not isinstance(item, str) or not _ACCEPT.match(item):
            raise WidgetError(f"{path}[{index}]", "must be a MIME type or a .extension")


def _max_files(path: str, value: Any) -> None:
    if type(value) is not int or not 1 <= value <= MAX_WIDGET_FILES:
        raise WidgetError(path, f"must be a whole number from 1 to {MAX_WIDGET_FILES}")


def _mode(path: str, value: Any) -> None:
    if value not in DATETIME_MODES:
        raise WidgetError(path, f"must be one of {', '.join(DATETIME_MODES)}")


def _moment_text(path: str, value: Any) -> None:
    # Checked against the mode once the whole spec is known (see _check_datetime).
    _text(64)(path, value)


def expires_at(path: str, value: Any) -> None:
    """An ISO 8601 moment with a time zone, as the apps compare it with their clock."""
    if not isinstance(value, str):
        raise WidgetError(path, "must be an ISO 8601 date and time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as err:
        raise WidgetError(path, "must be an ISO 8601 date and time") from err
    if moment.tzinfo is None:
        raise WidgetError(path, "needs a time zone (for example Z or +01:00)")


_RULES: Final[dict[str, Rule]] = {
    "title": _text(MAX_WIDGET_TITLE_CHARS),
    "body": _text(MAX_WIDGET_BODY_CHARS, empty=True),
    "danger": _flag,
    "labels": _labels,
    "options": _options,
    "multi": _flag,
    "scopes": _scopes,
    "fields": _fields,
    "submitLabel": _text(MAX_WIDGET_BUTTON_CHARS),
    "value": _non_negative,
    "max": _positive,
    "cancellable": _flag,
    "multiple": _flag,
    "accept": _accept,
    "maxFiles": _max_files,
    "mode": _mode,
    "min": _moment_text,
}
# datetime's `max` is a moment, progress's a number: the kind decides.
_DATETIME_MAX: Final[Rule] = _moment_text

# Per kind: (required fields, optional fields). Every kind may carry a body.
SPEC_FIELDS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    CONFIRM: (("title",), ("body", "danger", "labels")),
    CHOICE: (("title", "options"), ("body", "multi")),
    PERMISSION: (("title",), ("body", "scopes")),
    FORM: (("title", "fields"), ("body", "submitLabel")),
    PROGRESS: (("title", "value"), ("body", "max", "cancellable")),
    FILE_PICKER: (("title",), ("body", "multiple", "accept", "maxFiles")),
    DATETIME: (("title", "mode"), ("body", "min", "max")),
}


def _check_field(kind: str, name: str, value: Any) -> None:
    rule = _DATETIME_MAX if (kind, name) == (DATETIME, "max") else _RULES[name]
    rule(f"spec.{name}", value)


def check_spec(kind: str, spec: Any) -> dict[str, Any]:
    """A complete spec of `kind`, checked; a copy."""
    if kind not in SPEC_FIELDS:
        raise WidgetError("kind", f"must be one of {', '.join(KINDS)}")
    required, optional = SPEC_FIELDS[kind]
    checked = dict(_object("spec", spec, required + optional))
    for name in required:
        if name not in checked:
            raise WidgetError(f"spec.{name}", "is required")
    for name, value in checked.items():
        _check_field(kind, name, value)
    if kind == PROGRESS:
        limit = checked.get("max", DEFAULT_PROGRESS_MAX)
        if _number("spec.value", checked["value"]) > _number("spec.max", limit):
            raise WidgetError("spec.value", f"must not exceed max ({limit})")
    if kind == DATETIME:
        _check_datetime(checked)
    if kind == FILE_PICKER and checked.get("maxFiles", 1) > 1 and checked.get("multiple") is False:
        raise WidgetError("spec.maxFiles", "above 1 needs multiple files allowed")
    return checked


def _check_datetime(spec: Mapping[str, Any]) -> None:
    parse = MOMENT_PARSERS[spec["mode"]]
    bounds = {}
    for name in ("min", "max"):
        if name in spec:
            try:
                bounds[name] = parse(spec[name])
            except ValueError as err:
                raise WidgetError(f"spec.{name}", f"is not a {spec['mode']} value") from err
    if "min" in bounds and "max" in bounds:
        try:
            ordered = bounds["min"] <= bounds["max"]
        except TypeError as err:  # one aware, one naive moment
            raise WidgetError("spec.max", "must use the same time zone form as min") from err
        if not ordered:
            raise WidgetError("spec.max", "must not be before min")


MOMENT_PARSERS: Final[dict[str, Callable[[str], Any]]] = {
    "date": date.fromisoformat,
    "time": time.fromisoformat,
    "datetime": datetime.fromisoformat,
}


def check_widget(payload: Any) -> dict[str, Any]:
    """A complete widget.standard v1 payload, checked; a copy."""
    allowed = ("type", "v", "id", "kind", "spec", "expires_at", "response_mode")
    widget = dict(_object("widget", payload, allowed))
    if widget.get("type") != WIDGET_STANDARD:
        raise WidgetError("type", f"must be {WIDGET_STANDARD}")
    _check_version(widget)
    _text(MAX_WIDGET_ID_CHARS)("id", widget.get("id"))
    if widget.get("kind") not in KINDS:
        raise WidgetError("kind", f"must be one of {', '.join(KINDS)}")
    widget["spec"] = check_spec(widget["kind"], widget.get("spec"))
    if "expires_at" in widget:
        expires_at("expires_at", widget["expires_at"])
    if "response_mode" in widget and widget["response_mode"] not in RESPONSE_MODES:
        raise WidgetError("response_mode", f"must be one of {', '.join(RESPONSE_MODES)}")
    return widget


def build_widget(
    kind: str,
    spec: Any,
    *,
    widget_id: str | None = None,
    expires: str | None = None,
    response_mode: str | None = None,
) -> dict[str, Any]:
    """A checked widget.standard v1 payload (a new id unless given); a datetime question
    that names no mode asks for both (the wire requires one)."""
    if kind == DATETIME and isinstance(spec, Mapping) and "mode" not in spec:
        spec = {**spec, "mode": "datetime"}
    payload: dict[str, Any] = {
        "type": WIDGET_STANDARD,
        "v": WIDGET_VERSION,
        "id": widget_id or str(uuid.uuid4()),
        "kind": kind,
        "spec": spec,
    }
    if expires is not None:
        payload["expires_at"] = expires
    if response_mode is not None:
        payload["response_mode"] = response_mode
    return check_widget(payload)


def check_patch(kind: str | None, spec: Mapping[str, Any] | None, patch: Any) -> dict[str, Any]:
    """A widget.update patch; with the widget's kind and current spec, the merged spec too.

    Without them (a widget sent long ago) each field is still checked by its own rule.
    """
    checked = dict(_object("patch", patch, ("spec", "expires_at")))
    if not checked:
        raise WidgetError("patch", "changes nothing: give spec or expires_at")
    if "expires_at" in checked:
        expires_at("patch.expires_at", checked["expires_at"])
    if "spec" in checked:
        partial = _object("patch.spec", checked["spec"], tuple(_RULES))
        if not partial:
            raise WidgetError("patch.spec", "must not be empty")
        if kind is not None and spec is not None:
            try:
                check_spec(kind, {**spec, **partial})
            except WidgetError as err:
                raise WidgetError(f"patch.{err.path}", err.problem) from err
        else:
            for name, value in partial.items():
                # An unknown widget's `max` may be a progress number or a datetime bound.
                field_kind = kind or (DATETIME if isinstance(value, str) else PROGRESS)
                try:
                    _check_field(field_kind, name, value)
                except WidgetError as err:
                    raise WidgetError(f"patch.{err.path}", err.problem) from err
        checked["spec"] = dict(partial)
    return checked


def build_update(ref: str, patch: Mapping[str, Any]) -> dict[str, Any]:
    """A widget.update v1 payload for an already checked patch."""
    _text(MAX_WIDGET_ID_CHARS)("ref", ref)
    return {
        "type": WIDGET_UPDATE,
        "v": WIDGET_VERSION,
        "id": str(uuid.uuid4()),
        "ref": ref,
        "patch": dict(patch),
    }


def _check_version(payload: Mapping[str, Any]) -> None:
    version = payload.get("v")
    if type(version) is not int or version != WIDGET_VERSION:
        raise WidgetError("v", f"must be {WIDGET_VERSION}")
