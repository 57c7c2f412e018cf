"""Naming a conversation: the `conversation` config subentry ("Add conversation").

Lists the conversations the running agent has seen (`Agent.conversations`) not named yet,
and asks for a name. Naming only adds Home Assistant objects (its notify entity); nothing of
the agent's sessions or trust is made or changed, and removing the subentry removes only its
entities. The owner's direct conversation is named from the start (owner_conversation.py);
removing its subentry never removes notify.home, and it is then offered again. Aborts are
translated; a text that is no relay id (`is_relay_id`) gets the form again. The chosen id is
compared exactly as received, and shown as escaped markdown (issues/markdown.py).
"""

from datetime import UTC, datetime
from typing import Any

import probatio
from homeassistant.config_entries import (
    ConfigEntryState,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_NAME
from homeassistant.helpers.selector import (
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)

from .client import SeenConversation, is_relay_id
from .const import CONF_CONVERSATION_ID, SUBENTRY_CONVERSATION
from .entity import named_conversations
from .issues.markdown import markdown_text
from .limits import MAX_CONVERSATION_NAME_CHARS, MAX_LISTED_MEMBERS
from .owner_conversation import owner_conversation_id
from .runtime import PacerelleConfigEntry


def named_conversation_ids(entry: PacerelleConfigEntry) -> set[str]:
    """The conversation ids the entry's subentries name."""
    return {conversation.conversation_id for conversation in named_conversations(entry)}


def unnamed(entry: PacerelleConfigEntry) -> list[SeenConversation]:
    """The conversations a user may name: the seen ones not named yet, and the owner's
    direct one (first) when its subentry was removed."""
    taken = named_conversation_ids(entry)
    agent = entry.runtime_data.agent
    seen = [c for c in agent.conversations() if c.conversation_id not in taken]
    direct = owner_conversation_id(entry)
    owner = agent.conversation(direct)  # always known to the agent, seen or not
    if direct in taken or owner is None:
        return seen
    return [owner, *(c for c in seen if c.conversation_id != direct)]


def label(conversation: SeenConversation) -> str:
    """What the list shows: the members, when last active, then the id (the step's
    description says so, translated; first what tells conversations apart, as the field
    is narrow); ids are pseudonymous."""
    members = list(conversation.member_ids[:MAX_LISTED_MEMBERS])
    if len(conversation.member_ids) > MAX_LISTED_MEMBERS:
        members.append("…")
    parts = [", ".join(members) or "?"]
    if conversation.last_active_at is not None:
        at = datetime.fromtimestamp(conversation.last_active_at, UTC)
        parts.append(at.strftime("%Y-%m-%d %H:%M UTC"))
    parts.append(conversation.conversation_id)
    return " · ".join(parts)


class ConversationSubentryFlow(ConfigSubentryFlow):
    """Name one conversation the agent has seen."""

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        entry: PacerelleConfigEntry = self._get_entry()
        if entry.state is not ConfigEntryState.LOADED:
            return self.async_abort(reason="agent_not_loaded")
        offered = unnamed(entry)
        errors: dict[str, str] = {}
        if user_input is not None:
            chosen = str(user_input[CONF_CONVERSATION_ID])
            name = str(user_input[CONF_NAME]).strip()
            found = next((c for c in offered if c.conversation_id == chosen), None)
            if not is_relay_id(chosen):
                # No id at all (too long, control characters): the form again, with why.
                errors[CONF_CONVERSATION_ID] = "invalid_conversation_id"
            elif chosen in named_conversation_ids(entry):
                return self.async_abort(reason="already_named")
            elif found is None:
                return self.async_abort(
                    reason="unknown_conversation",
                    description_placeholders={"conversation_id": markdown_text(chosen)},
                )
            elif name and len(name) <= MAX_CONVERSATION_NAME_CHARS:
                return self.async_create_entry(
                    title=name,
                    data={CONF_CONVERSATION_ID: chosen},
                    unique_id=chosen,
                )
            else:
                errors[CONF_NAME] = "invalid_name"
        if not offered:
            return self.async_abort(reason="no_conversations")
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(_schema(offered), user_input or {}),
            errors=errors,
        )


def _schema(offered: list[SeenConversation]) -> probatio.Schema:
    choices = [SelectOptionDict(value=c.conversation_id, label=label(c)) for c in offered]
    return probatio.Schema(
        {
            # custom_value: an id copied from event data may be typed (and is checked).
            probatio.Required(CONF_CONVERSATION_ID): SelectSelector(
                SelectSelectorConfig(
                    options=choices, mode=SelectSelectorMode.LIST, custom_value=True
                )
            ),
            probatio.Required(CONF_NAME): TextSelector(),
        }
    )


SUBENTRY_FLOWS: dict[str, type[ConfigSubentryFlow]] = {
    SUBENTRY_CONVERSATION: ConversationSubentryFlow
}
