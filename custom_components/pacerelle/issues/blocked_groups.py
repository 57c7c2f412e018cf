"""The repair that says why a group gets nothing: a device the user blocked is in it.

A group message is sealed once for all the members, so while a blocked device holds a key
of the group's current epoch the trust door seals nothing for that group (client
trust/door.py `check_group`; the client answers which groups, `Agent.blocked_in_groups`).
Without this repair the user would learn it only from a failed action or a log line (an
Assist answer, a flushed queued send). It names the group (its name if named) and the
device, and says what to do: remove the device from the group in Pacerelle, or trust it
again. Not fixable here and not persistent: it is worked out again whenever it can change
(a trust decision, a group message, a send's status: a send fetches the group's keys)
and at each start, and goes once the group may be written to again, or with the entry.
"""

from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..const import DOMAIN
from ..device import agent_name
from ..entity import named_conversations
from ..runtime import PacerelleConfigEntry
from ..signals import message_signal, message_status_signal, status_signal
from .markdown import markdown_text

BLOCKED_IN_GROUP: Final = "blocked_in_group"


def blocked_issue_id(entry_id: str, conversation_id: str) -> str:
    return f"{BLOCKED_IN_GROUP}_{entry_id}_{conversation_id}"


@callback
def async_watch_blocked_in_groups(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Keep the entry's repairs equal to the client's answer while the entry is loaded."""
    shown: dict[str, tuple[str, str, str]] = {}  # group -> (name, person, device)

    @callback
    def update(*_: object) -> None:
        blocked = entry.runtime_data.agent.blocked_in_groups()
        if not blocked and not shown:
            return  # asked at each message and status: the names only when something shows
        names = {c.conversation_id: c.title for c in named_conversations(entry)}
        now = {
            group: (names.get(group, group), person, device)
            for group, (person, device) in blocked.items()
        }
        for group in shown.keys() - now.keys():
            ir.async_delete_issue(hass, DOMAIN, blocked_issue_id(entry.entry_id, group))
        for group, (name, person, device) in now.items():
            if shown.get(group) == (name, person, device):
                continue
            ir.async_create_issue(
                hass,
                DOMAIN,
                blocked_issue_id(entry.entry_id, group),
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=BLOCKED_IN_GROUP,
                translation_placeholders={
                    "agent_name": agent_name(entry),
                    "group_title": name,  # the title: plain text
                    "group": markdown_text(name),  # the description: markdown
                    "person": markdown_text(person),
                    "device": markdown_text(device),
                },
            )
        shown.clear()
        shown.update(now)

    @callback
    def clear() -> None:
        for group in shown:
            ir.async_delete_issue(hass, DOMAIN, blocked_issue_id(entry.entry_id, group))
        shown.clear()

    update()
    entry.async_on_unload(clear)
    entry.async_on_unload(entry.runtime_data.trust.add_listener(update))
    entry.async_on_unload(async_dispatcher_connect(hass, message_signal(entry.entry_id), update))
    for signal in (status_signal, message_status_signal):
        entry.async_on_unload(async_dispatcher_connect(hass, signal(entry.entry_id), update))
