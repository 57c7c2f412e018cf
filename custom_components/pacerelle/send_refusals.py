"""The one table of send refusals: each client SendRefusal and its two translations.

The client says why a send was refused (client/errors.py, `SendRefusal`); an action
(services_common.py) and an LLM tool (llm_tools.py) each turn that into a translated error
here, from the same row. tests/test_send_refusals.py fails when a refusal has no row or a
row names a translation that does not exist.
"""

from typing import Final, NamedTuple

from .client import SendRefusal


class Translations(NamedTuple):
    """Translation keys (strings.json `exceptions`) of one refusal."""

    service: str  # placeholders: agent_name, message_id, detail
    llm: str  # placeholder: detail


REFUSALS: Final[dict[SendRefusal, Translations]] = {
    SendRefusal.UNKNOWN_REQUEST: Translations("unknown_message", "llm_unknown_request"),
    SendRefusal.NO_SESSION: Translations("not_spoken_yet", "llm_no_session"),
    SendRefusal.TOO_LONG: Translations("text_too_long", "llm_too_long"),
    SendRefusal.NOTE_TOO_LONG: Translations("refused_note_too_long", "llm_note_too_long"),
    SendRefusal.BAD_ATTACHMENT: Translations("attachment_unreadable", "llm_bad_attachment"),
    SendRefusal.INVALID_DEVICE_ID: Translations("invalid_device_id", "llm_invalid_device_id"),
    SendRefusal.QUEUE_FULL: Translations("queue_full", "llm_queue_full"),
    SendRefusal.NO_TRUSTED_DEVICE: Translations("no_trusted_device", "llm_no_trusted_device"),
    SendRefusal.BLOCKED_DEVICE: Translations("blocked_device", "llm_blocked_device"),
    SendRefusal.UNTRUSTED_DEVICE: Translations("untrusted_device", "llm_untrusted_device"),
    SendRefusal.KEY_CHANGED: Translations("key_changed", "llm_key_changed"),
    SendRefusal.UNTRUSTED_REQUEST: Translations("untrusted_request", "llm_untrusted_request"),
}
