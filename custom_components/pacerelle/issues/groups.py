"""The notice that an agent was added to a group: a repair issue whose fix flow names it.

Raised at a message from a group that is not named (no `conversation` subentry), one per
group and agent. Its fix flow names the group through the "Add conversation" subentry flow
itself (subentry_flow.py: the same checks and refusals). It goes once the group is named or
the entry removed (issues/entry.py). It is persistent: dismissed, it is never shown again; a
group unnamed later raises a new notice at its next message. A relay can invent groups, so at
most MAX_GROUP_NOTICES are shown per agent; "Add conversation" lists every group regardless.
"""

import logging
from collections.abc import Mapping
from typing import Any, Final

import probatio
from homeassistant.components.repairs import RepairsFlow, RepairsFlowResult
from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    SOURCE_USER,
    ConfigEntry,
    ConfigEntryChange,
    ConfigEntryState,
)
from homeassistant.const import CONF_NAME
from homeassistant.core import HomeAssistant, callback
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.selector import TextSelector

from ..const import CONF_CONVERSATION_ID, DOMAIN, SUBENTRY_CONVERSATION
from ..device import agent_name
from ..limits import MAX_GROUP_NOTICES
from ..runtime import PacerelleConfigEntry
from ..signals import Delivered, message_signal
from ..subentry_flow import label, named_conversation_ids
from .markdown import markdown_text

_LOGGER = logging.getLogger(__name__)

NEW_GROUP: Final = "new_group"
DATA_ENTRY_ID: Final = "entry_id"


def notice_id(entry_id: str, conversation_id: str) -> str:
    return f"{NEW_GROUP}_{entry_id}_{conversation_id}"


def is_group_notice(data: Mapping[str, Any] | None) -> bool:
    return data is not None and data.get("kind") == NEW_GROUP


def _notices(hass: HomeAssistant, entry_id: str) -> list[ir.IssueEntry]:
    """The agent's group notices in the registry, dismissed ones included."""
    return [
        issue
        for (domain, _), issue in ir.async_get(hass).issues.items()
        if domain == DOMAIN
        and issue.translation_key == NEW_GROUP
        and (issue.data or {}).get(DATA_ENTRY_ID) == entry_id
    ]


@callback
def async_notice_group(hass: HomeAssistant, entry: PacerelleConfigEntry, group_id: str) -> None:
    """Raise the group's notice unless it is named, raised already (shown or dismissed), or
    MAX_GROUP_NOTICES of the agent are shown."""
    if group_id in named_conversation_ids(entry):
        return
    issue_id = notice_id(entry.entry_id, group_id)
    if ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None:
        return
    shown = [n for n in _notices(hass, entry.entry_id) if n.dismissed_version is None]
    if len(shown) >= MAX_GROUP_NOTICES:
        _LOGGER.debug("No notice for group %s: %s are shown", group_id, len(shown))
        return
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue_id,
        is_fixable=True,
        is_persistent=True,  # until named or dismissed: a restart changes nothing
        severity=ir.IssueSeverity.WARNING,
        translation_key=NEW_GROUP,
        translation_placeholders={"agent_name": agent_name(entry)},
        data={"kind": NEW_GROUP, DATA_ENTRY_ID: entry.entry_id, CONF_CONVERSATION_ID: group_id},
    )


@callback
def async_clear_named(hass: HomeAssistant, entry: ConfigEntry[Any]) -> None:
    """Delete the notices of the groups the entry names now."""
    named = named_conversation_ids(entry)
    for notice in _notices(hass, entry.entry_id):
        if (notice.data or {}).get(CONF_CONVERSATION_ID) in named:
            ir.async_delete_issue(hass, DOMAIN, notice.issue_id)


@callback
def async_watch_new_groups(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Notice groups at their messages while the entry is loaded; clear named ones."""

    @callback
    def delivered(item: Delivered) -> None:
        if item.request.is_group:
            async_notice_group(hass, entry, item.request.conversation_id)

    @callback
    def changed(change: ConfigEntryChange, changed_entry: ConfigEntry[Any]) -> None:
        if change is ConfigEntryChange.UPDATED and changed_entry.entry_id == entry.entry_id:
            async_clear_named(hass, changed_entry)

    async_clear_named(hass, entry)
    entry.async_on_unload(async_dispatcher_connect(hass, message_signal(entry.entry_id), delivered))
    entry.async_on_unload(async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, changed))


class NameGroupFlow(RepairsFlow):
    """Name the group of a notice, through the `conversation` subentry flow."""

    def __init__(self, entry_id: str, conversation_id: str) -> None:
        self._entry_id = entry_id
        self._conversation_id = conversation_id

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> RepairsFlowResult:
        entry: PacerelleConfigEntry | None = self.hass.config_entries.async_get_entry(
            self._entry_id
        )
        if entry is None or entry.state is not ConfigEntryState.LOADED:
            return self.async_abort(reason="agent_not_loaded")
        errors: dict[str, str] = {}
        # Home Assistant starts the step with {"issue_id": ...}: only a name is an answer.
        if user_input is not None and CONF_NAME in user_input:
            result = await self._name(str(user_input[CONF_NAME]))
            if result["type"] is FlowResultType.CREATE_ENTRY:
                return self.async_create_entry(data={})
            if result["type"] is FlowResultType.ABORT:
                return self.async_abort(
                    reason=str(result["reason"]),
                    description_placeholders=result.get("description_placeholders"),
                )
            errors = dict(result.get("errors") or {})
            if set(errors) - {CONF_NAME}:  # about the group, not the name: nothing to ask
                return self.async_abort(
                    reason="unknown_conversation",
                    description_placeholders={
                        CONF_CONVERSATION_ID: markdown_text(self._conversation_id)
                    },
                )
        seen = next(
            (
                c
                for c in entry.runtime_data.agent.conversations()
                if c.conversation_id == self._conversation_id
            ),
            None,
        )
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                probatio.Schema({probatio.Required(CONF_NAME): TextSelector()}), user_input or {}
            ),
            description_placeholders={
                "agent_name": agent_name(entry),
                "conversation": markdown_text(
                    label(seen) if seen is not None else self._conversation_id
                ),
            },
            errors=errors,
        )

    async def _name(self, name: str) -> Any:
        """The subentry flow's answer to this group and name (its form closed if it asks
        again: a bad name)."""
        flows = self.hass.config_entries.subentries
        form = await flows.async_init(
            (self._entry_id, SUBENTRY_CONVERSATION), context={"source": SOURCE_USER}
        )
        if form["type"] is not FlowResultType.FORM:
            return form
        chosen = {CONF_CONVERSATION_ID: self._conversation_id, CONF_NAME: name}
        result = await flows.async_configure(form["flow_id"], chosen)
        if result["type"] is FlowResultType.FORM:
            flows.async_abort(form["flow_id"])
        return result
