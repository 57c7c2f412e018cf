"""A person's answer to one of our widgets: parsing it, whether it fits the widget,
whether it comes from someone the question was addressed to (`Addressee`, `group_members`),
and a group's answers one per member (`MemberAnswers`).

`{"type": "widget.response", "id", "ref", "value"?, "cancelled"?}`; `ref` is the widget's
id. What the apps send as `value` depends on the kind (see `answer_problem`).
"""

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from ..limits import MAX_WIDGET_ID_CHARS
from ..relay.frames import is_group_recipient
from .group_epochs import GroupEpoch, advance, counts_as_member, member_ids
from .groups import GroupKey
from .widgets import (
    CHOICE,
    CONFIRM,
    DATETIME,
    FORM,
    MOMENT_PARSERS,
    PERMISSION,
    WIDGET_RESPONSE,
)

NUMBER_FIELD: Final = "number"
_WHOLE: Final = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL: Final = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


@dataclass(frozen=True, slots=True)
class WidgetResponse:
    """A person's answer to one of our widgets."""

    id: str
    ref: str
    value: Any
    cancelled: bool


def parse_response(payload: Any) -> WidgetResponse | None:
    """A person's answer, or None when `payload` is not a well-formed widget.response."""
    if not isinstance(payload, Mapping) or payload.get("type") != WIDGET_RESPONSE:
        return None
    ids = (payload.get("id"), payload.get("ref"))
    if not all(isinstance(value, str) and 0 < len(value) <= MAX_WIDGET_ID_CHARS for value in ids):
        return None
    cancelled = payload.get("cancelled", False)
    if not isinstance(cancelled, bool):
        return None
    return WidgetResponse(str(ids[0]), str(ids[1]), payload.get("value"), cancelled)


def typed_answer(kind: str, spec: Mapping[str, Any], value: Any) -> Any:
    """`value` with a form's number fields as numbers (int when whole), as the apps send
    them as text; an empty one is None, one that reads as no number is left as it is
    (`answer_problem` refuses it)."""
    if kind != FORM or not isinstance(value, dict):
        return value
    numbers = {
        field.get("name")
        for field in spec.get("fields") or ()
        if isinstance(field, dict) and field.get("type") == NUMBER_FIELD
    }
    return {name: _number(given) if name in numbers else given for name, given in value.items()}


def _number(given: Any) -> Any:
    if not isinstance(given, str):
        return given
    text = given.strip()
    if not text:
        return None
    if _WHOLE.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text) and math.isfinite(number := float(text)):
        return number
    return given


def answer_problem(kind: str, spec: Mapping[str, Any], value: Any) -> str | None:
    """Why `value` cannot be an answer to this widget, or None when it fits.

    What the apps send: true/false for confirm and permission, an option id (a list of
    them when `multi`) for choice, an object of field values for form, the ISO text of
    the chosen moment for datetime.
    """
    if kind in (CONFIRM, PERMISSION):
        return None if isinstance(value, bool) else "expected true or false"
    if kind == CHOICE:
        return _choice_problem(spec, value)
    if kind == FORM:
        return _form_problem(spec, value)
    if kind == DATETIME:
        parse = MOMENT_PARSERS.get(str(spec.get("mode")))
        if not isinstance(value, str) or parse is None:
            return "expected a date or time as text"
        try:
            parse(value)
        except ValueError:
            return f"not a {spec.get('mode')} value"
    return None


def _choice_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    known = {option.get("id") for option in spec.get("options") or () if isinstance(option, dict)}
    chosen = value if spec.get("multi") is True else [value]
    if not isinstance(chosen, list) or not all(isinstance(item, str) for item in chosen):
        return "expected option ids" if spec.get("multi") is True else "expected an option id"
    unknown = sorted(set(chosen) - known)
    if unknown:
        return f"unknown option {unknown[0]}"
    return None


def _form_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    if not isinstance(value, dict):
        return "expected an object of field values"
    fields = {field["name"]: field for field in spec.get("fields") or () if isinstance(field, dict)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        return f"unknown field {unknown[0]}"
    for name, field in fields.items():
        given = value.get(name)
        if given is not None and not isinstance(given, str | int | float | bool):
            return f"field {name} is not a plain value"
        if field.get("type") == NUMBER_FIELD and given is not None and not _is_number(given):
            return f"field {name} is not a number"
        if field.get("required") is True and given in (None, ""):
            return f"required field {name} is empty"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class Addressee:
    """Who may answer a question: one person, or a group's members, in one conversation.

    In a direct conversation that is the person it went to, from any of their devices. In
    a group asked without a response mode it is the person whose message the question
    answers, or the agent's owner when it answers none: one member never answers for
    another. Asked with a response mode (`individual` or `collective`) it is any member of
    the group (`person_id` None): see `group_members`. When no member is known, anyone in
    the group's conversation counts (the relay delivers it only from its members). In a
    group, in every mode, an answer from someone no longer a member never counts.
    """

    conversation_id: str
    person_id: str | None
    members: frozenset[str] = frozenset()
    # Asked in a group: whoever answers must also be a member now (`group_members`), the
    # person asked included (a member who left still holds keys that open).
    in_group: bool = False

    @classmethod
    def of(cls, conversation_id: str, to: str, asked_by: str | None, owner_id: str) -> Addressee:
        """`to` is where the question went (a person, or `group:<conversation>`)."""
        if is_group_recipient(to, conversation_id):
            return cls(conversation_id, asked_by or owner_id, in_group=True)
        return cls(conversation_id, to)

    @classmethod
    def group(cls, conversation_id: str, members: Iterable[str]) -> Addressee:
        """Any of the group's `members` (asked with a response mode)."""
        return cls(conversation_id, None, frozenset(members), in_group=True)

    def among(self, members: Iterable[str]) -> Addressee:
        """The same, with the group's members as known now."""
        return replace(self, members=frozenset(members))

    def refusal(self, conversation_id: str, sender_id: str) -> str | None:
        """Why an answer from this sender and conversation does not count, or None."""
        if conversation_id != self.conversation_id:
            return f"it came from conversation {conversation_id}, not {self.conversation_id}"
        if self.person_id is not None and sender_id != self.person_id:
            return f"it came from {sender_id}, not {self.person_id}"
        if self.in_group and not counts_as_member(self.members, sender_id):
            return f"it came from {sender_id}, who is not a member of the group now"
        return None


def group_members(
    keys: Iterable[GroupKey],
    conversation_id: str,
    agent_id: str,
    epoch: GroupEpoch | None = None,
) -> frozenset[str]:
    """The group's members as the agent knows them: the senders of its keys of the group's
    current `epoch` (derived from the keys when not given), the removed excepted
    (group_epochs.py: a member who left makes no key of the epochs after, and one he makes
    alone never counts), the agent itself excluded. Empty when it holds none, or only keys
    stored before their sender was recorded."""
    held = [key for key in keys if key.conversation_id == conversation_id]
    if epoch is None:
        epoch = advance(None, held, conversation_id)
    return member_ids(epoch, held, agent_id)


class MemberAnswers[T]:
    """`individual` answers: each member's first answer, in arrival order.

    A member's later answers are refused (`add` returns False): the first one is what the
    waiting script sees, as an app offers the question once per member.
    """

    def __init__(self) -> None:
        self.answers: dict[str, T] = {}

    def add(self, sender_id: str, answer: T) -> bool:
        """Keep the member's answer; False when they had answered already."""
        if sender_id in self.answers:
            return False
        self.answers[sender_id] = answer
        return True

    def complete(self, members: frozenset[str]) -> bool:
        """Every member answered (never, when no member is known: wait for the timeout)."""
        return bool(members) and members <= self.answers.keys()
