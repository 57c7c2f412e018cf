"""Options flow: the agent's settings (options.py), each shown with its current value.

Saving changed options reloads the entry (OptionsFlowWithReload), so the runtime always runs
with what is shown. The debugging switch sits in a folded section (Home Assistant 2026.10's
replacement for advanced mode): turning encryption off is for debugging against a test
server only. The conversations the LLM API may reach are picked from those the agent has
seen (or typed), a named one listed by its name (its `conversation` subentry's title), the
others as "Add conversation" shows them; none picked means the owner's direct conversation
only. What is stored is the conversation id, as before.

The voice assistant is a list of our own: "no voice" (stored as None), "preferred" (stored
as "preferred", Home Assistant's preferred pipeline at the time of each note) and every
pipeline by name. Home Assistant's own pipeline picker cannot say "none": its "preferred"
comes back as an empty value, which read as off saved no pipeline while showing one.
"""

import os
from typing import Any

import probatio
from homeassistant.components.assist_pipeline import OPTION_PREFERRED, async_get_pipelines
from homeassistant.config_entries import ConfigFlowResult, OptionsFlowWithReload
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import (
    BooleanSelector,
    ConversationAgentSelector,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)

from .const import CONF_CONVERSATION_ID
from .entity import named_conversations
from .options import (
    CONF_ASSIST_AGENT,
    CONF_ASSIST_IN_GROUPS,
    CONF_LLM_CONVERSATIONS,
    CONF_MEDIA_FOLDER,
    CONF_VOICE_PIPELINE,
    CONF_VOICE_SPOKEN_ANSWER,
    CONF_VOICE_TRANSCRIPTS,
    AgentOptions,
)
from .subentry_flow import label

# The voice list's "no voice" entry (stored as None: voice notes are not transcribed).
VOICE_NONE = "none"


def voice_choices(hass: HomeAssistant, current: str | None) -> list[SelectOptionDict]:
    """No voice, the preferred assistant, every pipeline; a chosen one that is gone stays
    listed by its id (saving the form unchanged keeps it, and voice.py says it is gone)."""
    choices = [
        SelectOptionDict(value=VOICE_NONE, label=VOICE_NONE),
        SelectOptionDict(value=OPTION_PREFERRED, label=OPTION_PREFERRED),
    ]
    # Pipelines exist once the assist_pipeline integration is set up (an after-dependency).
    if "assist_pipeline" in hass.config.components:
        choices += [SelectOptionDict(value=p.id, label=p.name) for p in async_get_pipelines(hass)]
    if current is not None and current not in {c["value"] for c in choices}:
        choices.append(SelectOptionDict(value=current, label=current))
    return choices


def options_schema(
    conversations: list[SelectOptionDict], voices: list[SelectOptionDict]
) -> probatio.Schema:
    """The form; `conversations` are offered for the LLM API's scope, `voices` for voice."""
    return probatio.Schema(
        {
            # Optional without defaults: a field the user empties is then really emptied.
            probatio.Optional(CONF_MEDIA_FOLDER): TextSelector(),
            probatio.Optional(CONF_ASSIST_AGENT): ConversationAgentSelector(),
            probatio.Optional(CONF_ASSIST_IN_GROUPS, default=False): BooleanSelector(),
            probatio.Optional(CONF_LLM_CONVERSATIONS): SelectSelector(
                SelectSelectorConfig(options=conversations, multiple=True, custom_value=True)
            ),
            probatio.Optional(CONF_VOICE_PIPELINE): SelectSelector(
                SelectSelectorConfig(
                    options=voices,
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key=CONF_VOICE_PIPELINE,
                )
            ),
            probatio.Optional(CONF_VOICE_TRANSCRIPTS, default=False): BooleanSelector(),
            probatio.Optional(CONF_VOICE_SPOKEN_ANSWER, default=False): BooleanSelector(),
        }
    )


class PacerelleOptionsFlow(OptionsFlowWithReload):
    """Change the settings of one agent."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        errors: dict[str, str] = {}
        current = AgentOptions.from_options(self.config_entry.options)
        if user_input is not None:
            chosen = AgentOptions(
                media_folder=user_input.get(CONF_MEDIA_FOLDER, "").strip(),
                assist_agent=user_input.get(CONF_ASSIST_AGENT) or None,
                assist_in_groups=bool(user_input.get(CONF_ASSIST_IN_GROUPS, False)),
                llm_conversations=tuple(user_input.get(CONF_LLM_CONVERSATIONS) or ()),
                voice_pipeline=_stored_voice(user_input.get(CONF_VOICE_PIPELINE)),
                voice_transcripts=bool(user_input.get(CONF_VOICE_TRANSCRIPTS, False)),
                voice_spoken_answer=bool(user_input.get(CONF_VOICE_SPOKEN_ANSWER, False)),
            )
            if chosen.media_folder and not await self.hass.async_add_executor_job(
                self._usable_folder, chosen.media_folder
            ):
                errors[CONF_MEDIA_FOLDER] = "invalid_media_folder"
            else:
                return self.async_create_entry(data=chosen.as_options())
            current = chosen
        suggested: dict[str, Any] = {
            CONF_MEDIA_FOLDER: current.media_folder,
            CONF_LLM_CONVERSATIONS: list(current.llm_conversations),
            CONF_ASSIST_IN_GROUPS: current.assist_in_groups,
            CONF_VOICE_TRANSCRIPTS: current.voice_transcripts,
            CONF_VOICE_SPOKEN_ANSWER: current.voice_spoken_answer,
            CONF_VOICE_PIPELINE: current.voice_pipeline or VOICE_NONE,
        }
        if current.assist_agent is not None:
            suggested[CONF_ASSIST_AGENT] = current.assist_agent
        voices = voice_choices(self.hass, current.voice_pipeline)
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                options_schema(self._known_conversations(current), voices), suggested
            ),
            errors=errors,
        )

    def _known_conversations(self, current: AgentOptions) -> list[SelectOptionDict]:
        """The owner's conversation, those chosen, the named ones and those the loaded agent
        has seen, each by its name, else as "Add conversation" shows it, else by its id."""
        entry = self.config_entry
        labels = {
            str(entry.data[CONF_CONVERSATION_ID]): "",
            **dict.fromkeys(current.llm_conversations, ""),
        }
        runtime = getattr(entry, "runtime_data", None)
        if runtime is not None:
            labels |= {seen.conversation_id: label(seen) for seen in runtime.agent.conversations()}
        labels |= {named.conversation_id: named.title for named in named_conversations(entry)}
        return [SelectOptionDict(value=cid, label=text or cid) for cid, text in labels.items()]

    def _usable_folder(self, path: str) -> bool:
        """An existing, writable folder Home Assistant allows integrations to use (blocking)."""
        return (
            os.path.isabs(path)
            and os.path.isdir(path)
            and os.access(path, os.W_OK)
            and self.hass.config.is_allowed_path(path)
        )


def _stored_voice(chosen: str | None) -> str | None:
    """The option's value for the list's choice: "no voice" and nothing are None."""
    return None if not chosen or chosen == VOICE_NONE else chosen
