"""`pacerelle.ask`: send a question widget, wait for the person, return the answer.

Returns `status` `answered` (with `value`), `cancelled` or `timeout`; the widget expires when
the wait ends. An answer counts only if it fits the question and comes from the person asked
(or, with a `response_mode`, a current member), in this conversation (`Question`), from a
trusted device (trust.py): a group member or a forging relay cannot answer for someone else.
Others are logged and ignored; every answer that counted is marked processed. Asked offline,
the question is queued (client/values/send_queue.py) with the ask's `timeout` as its expiry.
`response_mode` (groups only; README "`pacerelle.ask`"): members are those of the group's
current epoch (client/values/group_epochs.py), recomputed at each answer; with no known
member anyone in the conversation counts. A member's first answer counts. A mode for a
direct conversation is refused with a translated ServiceValidationError before any send.
"""

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final

import probatio
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.translation import async_get_exception_message
from homeassistant.util import dt as dt_util

from ..assist.bridge import trust_placeholders
from ..client import (
    ASKABLE_KINDS,
    DATETIME_MODES,
    RESPONSE_MODES,
    PacerelleError,
    SendError,
    WidgetError,
    build_widget,
)
from ..const import CONF_AGENT_ID, CONF_OWNER_ID, DOMAIN
from ..errors import action_error
from ..events import widget_response_data
from ..limits import MAX_ASK_TIMEOUT
from ..runtime import PacerelleConfigEntry
from ..signals import WidgetAnswer
from .ask_answers import AnswerWait
from .common import (
    AGENT_FIELDS,
    TARGET_FIELDS,
    client_errors,
    resolve_entry,
    target_fields,
)

_LOGGER = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 300

STATUS_ANSWERED: Final = "answered"
STATUS_CANCELLED: Final = "cancelled"
STATUS_TIMEOUT: Final = "timeout"

ATTR_KIND: Final = "kind"
ATTR_TIMEOUT: Final = "timeout"
ATTR_RESPONSE_MODE: Final = "response_mode"

# Action fields that go into the spec, by the spec's own name.
_SPEC_FIELDS: Final = {
    "title": "title",
    "body": "body",
    "danger": "danger",
    "options": "options",
    "multiple": "multi",
    "scopes": "scopes",
    "fields": "fields",
    "submit_label": "submitLabel",
    "mode": "mode",
    "min": "min",
    "max": "max",
}

ASK_SCHEMA: Final = probatio.Schema(
    {
        **AGENT_FIELDS,
        probatio.Required(ATTR_KIND): probatio.In(ASKABLE_KINDS),
        probatio.Required("title"): cv.string,
        probatio.Optional("body"): cv.string,
        probatio.Optional("danger"): cv.boolean,
        probatio.Optional("yes_label"): cv.string,
        probatio.Optional("no_label"): cv.string,
        probatio.Optional("options"): [probatio.Any(cv.string, dict)],
        probatio.Optional("multiple"): cv.boolean,
        probatio.Optional("scopes"): [cv.string],
        probatio.Optional("fields"): [dict],
        probatio.Optional("submit_label"): cv.string,
        probatio.Optional("mode"): probatio.In(DATETIME_MODES),
        probatio.Optional("min"): cv.string,
        probatio.Optional("max"): cv.string,
        probatio.Optional("spec"): dict,
        probatio.Optional(ATTR_RESPONSE_MODE): probatio.In(RESPONSE_MODES),
        probatio.Optional(ATTR_TIMEOUT, default=DEFAULT_TIMEOUT): probatio.All(
            probatio.Coerce(float), probatio.Range(min=1, max=MAX_ASK_TIMEOUT)
        ),
        **TARGET_FIELDS,
    }
)


def question_spec(data: dict[str, Any]) -> dict[str, Any]:
    """The widget spec from the action's friendly fields (`spec` may add or override)."""
    spec = {name: data[field] for field, name in _SPEC_FIELDS.items() if field in data}
    if "options" in spec:
        spec["options"] = [
            {"id": item, "label": item} if isinstance(item, str) else item
            for item in spec["options"]
        ]
    labels = {key: data[f"{key}_label"] for key in ("yes", "no") if f"{key}_label" in data}
    if labels:
        spec["labels"] = labels
    spec.update(data.get("spec") or {})
    return spec


async def async_ask(call: ServiceCall) -> ServiceResponse:
    hass = call.hass
    entry = resolve_entry(hass, call)
    target = target_fields(call)
    agent = entry.runtime_data.agent
    mode: str | None = call.data.get(ATTR_RESPONSE_MODE)
    if mode is not None and not _asks_a_group(hass, entry, target):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="response_mode_not_group",
            translation_placeholders={"response_mode": mode},
        )
    timeout: float = call.data[ATTR_TIMEOUT]
    deadline = dt_util.utcnow() + timedelta(seconds=timeout)
    try:
        widget = build_widget(
            call.data[ATTR_KIND],
            question_spec(dict(call.data)),
            expires=deadline.isoformat(timespec="seconds"),
            response_mode=mode,
        )
    except WidgetError as err:
        raise action_error(err) from err
    widget_id = widget["id"]
    conversation: list[str] = []

    def members() -> frozenset[str]:
        return agent.group_members(conversation[0]) if conversation else frozenset()

    trust = entry.runtime_data.trust

    def trusted_now(answer: WidgetAnswer) -> bool:
        # The key that wrote the answer, judged on the decisions made since (the door).
        return trust.judged_now(answer.request).trusted

    @callback
    def untrusted(answer: WidgetAnswer) -> None:
        message_id = answer.request.message_id
        hass.async_create_background_task(
            _tell_untrusted(entry, answer), f"pacerelle untrusted answer {message_id}"
        )

    wait = AnswerWait(
        hass,
        widget_id,
        widget["kind"],
        widget["spec"],
        response_mode=mode,
        members=members,
        trusted_now=trusted_now,
        untrusted=untrusted,
    )
    stop_trust = trust.add_listener(lambda _decided, _before: wait.trust_changed())

    # Listening before sending: a quick answer cannot slip between the two.
    unsubscribe = wait.listen(entry.entry_id)
    try:
        with client_errors(hass, entry, target["source_message_id"]):
            # Offline, the question waits queued no longer than the answer is awaited.
            reply = await agent.send_widget(widget, **target, expire_after=timeout)
        source = target["source_message_id"]
        asked = agent.find_request(source) if source is not None else None
        conversation.append(reply.conversation_id)
        wait.addressed(
            reply.conversation_id,
            reply.to,
            asked.sender_id if asked is not None else None,
            str(entry.data[CONF_OWNER_ID]),
        )
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await wait.settled
    finally:
        unsubscribe()
        stop_trust()
    answers = [_answer_data(entry, answer) for answer in wait.answers]
    for data in answers:
        # Already marked (SendError) is no failure; a failed save is (store_failed, errors.py).
        with client_errors(hass, entry), contextlib.suppress(SendError):
            await agent.mark_processed(data["message_id"], f"Answer to pacerelle.ask {widget_id}")
    question = {"widget_id": widget_id, "message_id": reply.message_id}
    if wait.question.each_member:
        return {**question, **_first_of(answers), "answers": [_answer(d) for d in answers]}
    if not answers:
        return {**question, **_no_answer(STATUS_TIMEOUT)}
    return {**question, **_result(answers[0])}


def _asks_a_group(hass: HomeAssistant, entry: PacerelleConfigEntry, target: dict[str, Any]) -> bool:
    """Whether the question goes to a group conversation (as the client resolves the send).
    An unknown source message is refused, translated, before anything is sent."""
    with client_errors(hass, entry, target["source_message_id"]):
        found = entry.runtime_data.agent.recipient(
            target["source_message_id"], target["conversation_id"], target["to"]
        )
    return found.is_group


async def _tell_untrusted(entry: PacerelleConfigEntry, answer: WidgetAnswer) -> None:
    """Tell the sender (a reply to their answer) that it does not count yet, and why."""
    request = answer.request
    text = async_get_exception_message(DOMAIN, "ask_untrusted", trust_placeholders(request.judged))
    try:
        await entry.runtime_data.agent.send_text(text, source_message_id=request.message_id)
    except PacerelleError as err:
        _LOGGER.warning(
            "Could not tell %s why their answer does not count: %s", request.sender_id, err
        )


def _answer_data(entry: PacerelleConfigEntry, answer: WidgetAnswer) -> Mapping[str, Any]:
    """The answer's `pacerelle_widget_response` fields, with the device its trust was
    judged by: in a group, the device that delivered the member's key (trust.py), which
    trust repairs and `block_device` name; the relay's label for the device is
    unauthenticated and never judged."""
    request = answer.request
    data = widget_response_data(entry.entry_id, str(entry.data[CONF_AGENT_ID]), request)
    assert data is not None  # a WidgetAnswer's request is a widget answer
    if not request.is_group:
        return data
    return {**data, "sender_device_id": request.judged.device_id}


def _first_of(answers: list[Mapping[str, Any]]) -> dict[str, Any]:
    """`individual`: the first answer that is no cancel, else the first cancel, else none."""
    chosen = next((d for d in answers if not d["cancelled"]), answers[0] if answers else None)
    return _result(chosen) if chosen is not None else _no_answer(STATUS_TIMEOUT)


def _result(data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "status": STATUS_CANCELLED if data["cancelled"] else STATUS_ANSWERED,
        "value": data["value"],
        "answer_message_id": data["message_id"],
        "sender_id": data["sender_id"],
        "sender_device_id": data["sender_device_id"],
        "answered_at": data["received_at"],
    }


def _answer(data: Mapping[str, Any]) -> dict[str, Any]:
    """One member's entry of `answers`."""
    return {
        "sender_id": data["sender_id"],
        "sender_device_id": data["sender_device_id"],
        "value": data["value"],
        "cancelled": data["cancelled"],
        "answer_message_id": data["message_id"],
        "answered_at": data["received_at"],
    }


def _no_answer(status: str) -> dict[str, Any]:
    return {
        "status": status,
        "value": None,
        "answer_message_id": None,
        "sender_id": None,
        "sender_device_id": None,
        "answered_at": None,
    }
