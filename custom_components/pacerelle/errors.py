"""The one translator of client errors: for actions, for LLM tools, for set-up, from one table.

Every kind of the client's errors (`PacerelleError.kind`) and every send refusal has a row
here; tests/integration/test_errors.py fails when one has none or a row names a translation
that strings.json lacks. A refused installation token (`ErrorKind.REVOKED`: the
installation was revoked) starts reauthentication from
`async_start_reauth`, the one place that does, whoever met it: an action, a tool or the
running agent (and set-up, through ConfigEntryAuthFailed).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, NamedTuple

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import (
    ConfigEntryAuthFailed,
    ConfigEntryNotReady,
    HomeAssistantError,
    ServiceValidationError,
)

from .client import (
    ErrorKind,
    KeyChangedError,
    PacerelleApiError,
    PacerelleError,
    SendError,
    SendRefusal,
    StoreError,
    WidgetError,
)
from .const import DOMAIN


class Translation(NamedTuple):
    """Translation keys (strings.json `exceptions`) of one error: for an action (placeholders
    agent_name, message_id, detail, error and the error's own) and for an LLM tool (detail,
    error and the error's own); `misuse`: the caller's mistake, a ServiceValidationError.
    No action key: the action's own word for "it failed" (send_failed, download_failed...,
    placeholders agent_name, message_id, error)."""

    action: str | None
    llm: str
    misuse: bool = False


REFUSALS: Final[dict[SendRefusal, Translation]] = {
    SendRefusal.UNKNOWN_REQUEST: Translation("unknown_message", "llm_unknown_request", True),
    SendRefusal.UNKNOWN_CONVERSATION: Translation(
        "unknown_conversation", "llm_unknown_conversation", True
    ),
    SendRefusal.NO_SESSION: Translation("not_spoken_yet", "llm_no_session", True),
    SendRefusal.TOO_LONG: Translation("text_too_long", "llm_too_long", True),
    SendRefusal.NOTE_TOO_LONG: Translation("refused_note_too_long", "llm_note_too_long", True),
    SendRefusal.BAD_ATTACHMENT: Translation("attachment_unreadable", "llm_bad_attachment", True),
    SendRefusal.INVALID_DEVICE_ID: Translation("invalid_device_id", "llm_invalid_device_id", True),
    SendRefusal.QUEUE_FULL: Translation("queue_full", "llm_queue_full", True),
    SendRefusal.NO_TRUSTED_DEVICE: Translation("no_trusted_device", "llm_no_trusted_device", True),
    SendRefusal.BLOCKED_DEVICE: Translation("blocked_device", "llm_blocked_device", True),
    SendRefusal.BLOCKED_GROUP_MEMBER: Translation(
        "blocked_group_member", "llm_blocked_group_member", True
    ),
    SendRefusal.UNTRUSTED_DEVICE: Translation("untrusted_device", "llm_untrusted_device", True),
    SendRefusal.KEY_CHANGED: Translation("key_changed", "llm_key_changed", True),
    SendRefusal.UNTRUSTED_REQUEST: Translation("untrusted_request", "llm_untrusted_request", True),
}

_FAILED = Translation(None, "llm_failed")
_STORE = Translation("store_failed", "llm_store_failed")

# Each kind of the client's errors (SendError: by its refusal, REFUSALS).
ERRORS: Final[dict[ErrorKind, Translation]] = {
    ErrorKind.FAILED: _FAILED,
    ErrorKind.NOT_CONNECTED: Translation("not_connected", "llm_not_connected"),
    # The server refused or answered garbage: the action failed, with what it said.
    ErrorKind.BAD_ANSWER: _FAILED,
    ErrorKind.SERVER_REFUSED: _FAILED,
    # A route refused a runtime token twice (one renewal between): a failure on the way.
    ErrorKind.AUTH_REFUSED: _FAILED,
    # The installation token itself was refused: signing in again is the only way back.
    ErrorKind.REVOKED: Translation("revoked", "llm_revoked"),
    ErrorKind.STORE: _STORE,
    # The send queue's own error: the sender refuses the send with its limit as the detail
    # (SendRefusal.QUEUE_FULL) before a host could meet it.
    ErrorKind.QUEUE_FULL: Translation("queue_full", "llm_queue_full", True),
    ErrorKind.INVALID_WIDGET: Translation("invalid_widget", "llm_invalid_widget", True),
    ErrorKind.KEY_CHANGED: Translation(
        "verification_code_mismatch", "llm_key_changed_decision", True
    ),
}


def translation(err: PacerelleError) -> Translation:
    """The row of `err`: its refusal's, or its kind's."""
    if isinstance(err, SendError):
        return REFUSALS[err.reason]
    return ERRORS[err.kind]


def _own(err: PacerelleError) -> dict[str, str]:
    """The placeholders an error brings of its own (detail: what it names, for both)."""
    if isinstance(err, SendError):
        return {"detail": err.detail}
    if isinstance(err, WidgetError):
        return {"detail": str(err), "path": err.path, "problem": err.problem}
    if isinstance(err, KeyChangedError):
        current = err.current
        return {
            "detail": current.code or "-",
            "person": current.person_id,
            "device": current.device_id,
            "code": current.code or "-",
        }
    if isinstance(err, StoreError):
        return {"detail": err.detail}
    return {"detail": str(err)}


@callback
def async_start_reauth(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """The installation's token was refused: ask the user to sign in again (once, however
    many parts of the agent met the refusal; Home Assistant keeps one flow per entry)."""
    entry.async_start_reauth(hass)


def action_error(
    err: PacerelleError,
    *,
    agent_name: str = "",
    message_id: str | None = None,
    failed: str = "send_failed",
    **placeholders: str,
) -> HomeAssistantError:
    """The translated error of an action that met `err`; `failed`: the action's own key
    for a failure no row names more precisely."""
    row = translation(err)
    values = {
        "agent_name": agent_name,
        "message_id": message_id or "",
        "error": str(err),
        **_own(err),
        **placeholders,
    }
    if isinstance(err, SendError):
        values["detail"] = str(err)  # an action shows the refusal with its reason
    kind = ServiceValidationError if row.misuse else HomeAssistantError
    return kind(
        translation_domain=DOMAIN,
        translation_key=row.action or failed,
        translation_placeholders=values,
    )


@contextmanager
def action_errors(
    hass: HomeAssistant,
    entry: ConfigEntry,
    *,
    agent_name: str,
    message_id: str | None = None,
    failed: str = "send_failed",
) -> Iterator[None]:
    """An action's client errors, translated (a refused token also starts reauth)."""
    try:
        yield
    except PacerelleError as err:
        if err.kind is ErrorKind.REVOKED:
            async_start_reauth(hass, entry)
        raise action_error(
            err, agent_name=agent_name, message_id=message_id, failed=failed
        ) from err


def tool_error(err: PacerelleError) -> HomeAssistantError:
    """The translated error an LLM tool returns for `err` (the model reads its message)."""
    values = {"error": str(err), **_own(err)}
    if isinstance(err, WidgetError):
        values["problem"] = str(err)  # the model gets the field's path with the problem
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key=translation(err).llm,
        translation_placeholders=values,
    )


@contextmanager
def tool_errors(hass: HomeAssistant, entry: ConfigEntry | None) -> Iterator[None]:
    """An LLM tool's client errors, translated (a refused token also starts reauth)."""
    try:
        yield
    except PacerelleError as err:
        if err.kind is ErrorKind.REVOKED and entry is not None:
            async_start_reauth(hass, entry)
        raise tool_error(err) from err


def setup_error(err: PacerelleError) -> HomeAssistantError:
    """What a failed first token request makes of set-up: a refused token starts
    reauthentication (Home Assistant does, for ConfigEntryAuthFailed); a malformed or
    hostile answer (client/relay/answers.py) and an outage are retried."""
    if err.kind in (ErrorKind.AUTH_REFUSED, ErrorKind.REVOKED):
        return ConfigEntryAuthFailed(translation_domain=DOMAIN, translation_key="revoked")
    key = "bad_server_answer" if err.kind is ErrorKind.BAD_ANSWER else "cannot_connect"
    return ConfigEntryNotReady(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={"error": str(err)},
    )


def connect_begin_error(err: PacerelleError) -> str:
    """The config flow's form error for a refused start of Agent Connect (the key is
    spent only when the request was accepted)."""
    if err.kind in (ErrorKind.AUTH_REFUSED, ErrorKind.REVOKED):
        return "invalid_connection_key"
    if isinstance(err, PacerelleApiError):
        return "cannot_connect" if err.status >= 500 else "request_refused"
    if err.kind is ErrorKind.BAD_ANSWER:
        return "invalid_response"
    return "cannot_connect"


def connect_exchange_error(err: PacerelleError) -> str:
    """The config flow's abort reason for a failed code exchange."""
    if isinstance(err, PacerelleApiError):
        return "cannot_connect" if err.status >= 500 else "exchange_refused"
    if err.kind is ErrorKind.NOT_CONNECTED:
        return "cannot_connect"
    return "invalid_response"
