"""A widget we sent, found again in the history: its newest send and its current spec.

The history holds our sends in order: a widget (`WIDGET_STANDARD`, its `id`) and then its
updates (`WIDGET_UPDATE`, `ref` to that id, whose `patch.spec` merges into the spec). The
newest of them is where an update goes (the same person and device). The widget itself
may have left the history while its updates stayed: then its kind is unknown (None).
An answer is typed by the widget it answers when it is opened (`typed_content`).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .history import History, Reply
from .payloads import Content, json_object
from .widget_answers import typed_answer
from .widgets import WIDGET_RESPONSE, WIDGET_STANDARD, WIDGET_UPDATE, build_update, check_patch


@dataclass(frozen=True, slots=True)
class SentWidget:
    id: str
    last: Reply  # the newest send about it, where an update goes
    kind: str | None  # None when the widget itself left the history
    spec: Mapping[str, Any] = field(default_factory=dict)

    def update(self, patch: Any) -> dict[str, Any]:
        """The widget.update payload of `patch`, checked against this widget's kind and
        current spec (each field by its own rule when the widget left the history)."""
        checked = check_patch(self.kind, self.spec if self.kind is not None else None, patch)
        return build_update(self.id, checked)


def sent_widget(history: History, widget_id: str) -> SentWidget | None:
    """The widget `widget_id` as our sends in `history` leave it; None when none is kept."""
    last: Reply | None = None
    kind: str | None = None
    spec: dict[str, Any] = {}
    for reply in history.replies:
        payload = json_object(reply.text)
        if payload is None:
            continue
        if payload.get("type") == WIDGET_STANDARD and payload.get("id") == widget_id:
            last, kind, spec = reply, str(payload.get("kind")), dict(payload.get("spec") or {})
        elif payload.get("type") == WIDGET_UPDATE and payload.get("ref") == widget_id:
            last = reply
            patch = payload.get("patch")
            if isinstance(patch, Mapping) and isinstance(patch.get("spec"), Mapping):
                spec.update(patch["spec"])
    return None if last is None else SentWidget(widget_id, last, kind, spec)


def typed_content(content: Content, history: History) -> Content:
    """`content` with its widget answer's value typed by the widget it answers (a form's
    numbers as numbers: `typed_answer`), when that widget is in `history`."""
    answer = content.widget
    if answer is None or answer.get("type") != WIDGET_RESPONSE or "value" not in answer:
        return content
    sent = sent_widget(history, str(answer.get("ref")))
    if sent is None or sent.kind is None:
        return content
    typed = typed_answer(sent.kind, sent.spec, answer["value"])
    if typed == answer["value"]:
        return content
    return replace(content, widget={**answer, "value": typed})
