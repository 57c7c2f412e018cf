"""`pacerelle.ask`: send a question widget, wait for the person, return the answer.

The widget expires when the wait ends, so the app stops offering it. The action always
returns one of three answers, told apart by `status`: `answered` (with `value`),
`cancelled` (the person dismissed it) or `timeout` (nobody answered in time). An answer
that does not fit the question (a confirm answered "maybe") is logged and ignored, and so
is an answer from anyone but the person asked, or from another conversation (see
`Addressee`): someone else in a group, or a relay forging a sender, cannot answer for them.
Nor does an answer from a device that is not trusted (trust.py), the person's own included.
The person's answer is marked processed: it was consumed by the waiting script.
Asked while the agent is offline, the question is queued (client/send_queue.py) with the
ask's own `timeout` as its expiry: it goes out when the connection is back, or never.
"""

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any, Final

import probatio
from homeassistant.core import Event, ServiceCall, ServiceResponse, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util

from .client.errors import PacerelleError
from .client.widget_answers import Addressee, answer_problem
from .client.widgets import (
    CHOICE,
    CONFIRM,
    DATETIME,
    DATETIME_MODES,
    FORM,
    PERMISSION,
    WidgetError,
    build_widget,
)
from .const import CONF_OWNER_ID
from .events import ATTR_ENTRY_ID, ATTR_WIDGET_ID, EVENT_WIDGET_RESPONSE
from .services_common import (
    AGENT_FIELDS,
    TARGET_FIELDS,
    client_errors,
    resolve_entry,
    target_fields,
    widget_invalid,
)

_LOGGER = logging.getLogger(__name__)

ASK_KINDS: Final = (CONFIRM, CHOICE, FORM, DATETIME, PERMISSION)
DEFAULT_TIMEOUT: Final = 300
MAX_TIMEOUT: Final = 24 * 3600

STATUS_ANSWERED: Final = "answered"
STATUS_CANCELLED: Final = "cancelled"
STATUS_TIMEOUT: Final = "timeout"

ATTR_KIND: Final = "kind"
ATTR_TIMEOUT: Final = "timeout"

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
        probatio.Required(ATTR_KIND): probatio.In(ASK_KINDS),
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
        probatio.Optional(ATTR_TIMEOUT, default=DEFAULT_TIMEOUT): probatio.All(
            probatio.Coerce(float), probatio.Range(min=1, max=MAX_TIMEOUT)
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
    if data[ATTR_KIND] == DATETIME:
        spec.setdefault("mode", "datetime")
    spec.update(data.get("spec") or {})
    return spec


async def async_ask(call: ServiceCall) -> ServiceResponse:
    hass = call.hass
    entry = resolve_entry(hass, call)
    target = target_fields(call)
    timeout: float = call.data[ATTR_TIMEOUT]
    deadline = dt_util.utcnow() + timedelta(seconds=timeout)
    try:
        widget = build_widget(
            call.data[ATTR_KIND],
            question_spec(dict(call.data)),
            expires=deadline.isoformat(timespec="seconds"),
        )
    except WidgetError as err:
        raise widget_invalid(err) from err
    widget_id, kind, spec = widget["id"], widget["kind"], widget["spec"]
    answer: asyncio.Future[dict[str, Any]] = hass.loop.create_future()

    @callback
    def ours(data: dict[str, Any]) -> bool:
        return data.get(ATTR_ENTRY_ID) == entry.entry_id and data.get(ATTR_WIDGET_ID) == widget_id

    # Who may answer is known once the question is sent; answers before that wait for it.
    addressee: list[Addressee] = []
    early: list[dict[str, Any]] = []

    @callback
    def answered(event: Event[dict[str, Any]]) -> None:
        if not addressee:
            early.append(dict(event.data))
        elif not answer.done():
            consider(event.data)

    @callback
    def consider(data: dict[str, Any]) -> None:
        refusal = addressee[0].refusal(data["conversation_id"], data["sender_id"])
        if refusal is None and not data.get("trusted"):
            refusal = f"device {data['sender_device_id']} is {data.get('trust_state')}"
        if refusal is not None:
            _LOGGER.warning("Ignored an answer to widget %s: %s", widget_id, refusal)
            return
        problem = None if data["cancelled"] else answer_problem(kind, spec, data["value"])
        if problem is not None:
            # Never hand a script something it could mistake for consent: wait on.
            _LOGGER.warning("Ignored an answer to widget %s: %s", widget_id, problem)
            return
        answer.set_result(dict(data))

    # Listening before sending: a quick answer cannot slip between the two.
    unsubscribe = hass.bus.async_listen(EVENT_WIDGET_RESPONSE, answered, event_filter=ours)
    try:
        agent = entry.runtime_data.agent
        with client_errors(entry, target["source_message_id"]):
            # Offline, the question waits queued no longer than the answer is awaited.
            reply = await agent.send_widget(widget, **target, expire_after=timeout)
        source = target["source_message_id"]
        asked = agent.find_request(source) if source is not None else None
        addressee.append(
            Addressee.of(
                reply.conversation_id,
                reply.to,
                asked.sender_id if asked is not None else None,
                str(entry.data[CONF_OWNER_ID]),
            )
        )
        for data in early:
            if not answer.done():
                consider(data)
        question = {"widget_id": widget_id, "message_id": reply.message_id}
        try:
            async with asyncio.timeout(timeout):
                data = await answer
        except TimeoutError:
            return {**question, **_no_answer(STATUS_TIMEOUT)}
    finally:
        unsubscribe()
    with contextlib.suppress(PacerelleError):
        await agent.mark_processed(data["message_id"], f"Answer to pacerelle.ask {widget_id}")
    return {
        **question,
        "status": STATUS_CANCELLED if data["cancelled"] else STATUS_ANSWERED,
        "value": data["value"],
        "answer_message_id": data["message_id"],
        "sender_id": data["sender_id"],
        "sender_device_id": data["sender_device_id"],
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
