"""What every Pacerelle LLM tool shares: argument checks, agent addressing, errors, views.

A bad argument raises `probatio.Invalid` (an error result for the model); refusals are
translated HomeAssistantErrors (errors.py, the actions' table). Every tool takes an optional
`agent` (id or name, case-insensitive); with several agents loaded the model must name one.
The tools read what people wrote, so only administrators and calls of no user may use them
(callers.py). A model's arguments may be prompt-injected by any message it reads, so every
tool is held to the conversations chosen in the options (`LlmScope`; none: the owner's direct
conversation only): reads leave the rest out, and naming anything outside is a tool error.
"""

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, override

import probatio
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm

from ..callers import async_require_admin
from ..client import Request
from ..const import CONF_AGENT_ID, CONF_CONVERSATION_ID, CONF_OWNER_ID, DOMAIN
from ..device import agent_name
from ..errors import tool_errors
from ..events import event_data
from ..options import AgentOptions
from ..runtime import PacerelleRuntime

ARG_AGENT = "agent"
AGENT_FIELD_DESCRIPTION = (
    "The Pacerelle agent (id or name). Optional when only one agent is set up."
)


@dataclass(frozen=True, slots=True)
class LlmScope:
    """What the LLM API may reach of one agent: the chosen conversations and, in them, the
    owner or the group itself as explicit recipients (anyone else only as the sender of a
    request in scope, answered through `sourceMessageId`)."""

    conversations: frozenset[str]
    owner_id: str
    direct_conversation_id: str

    @classmethod
    def of_entry(cls, entry: ConfigEntry[PacerelleRuntime]) -> LlmScope:
        direct = str(entry.data[CONF_CONVERSATION_ID])
        chosen = AgentOptions.from_options(entry.options).llm_conversations
        return cls(frozenset(chosen or (direct,)), str(entry.data[CONF_OWNER_ID]), direct)

    def covers(self, conversation_id: str) -> bool:
        return conversation_id in self.conversations

    def check_conversation(self, conversation_id: str) -> None:
        if not self.covers(conversation_id):
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="llm_out_of_scope",
                translation_placeholders={"conversation_id": conversation_id},
            )


@dataclass(frozen=True, slots=True)
class AgentRef:
    """One loaded agent, as the tools see it."""

    agent_id: str
    name: str
    runtime: PacerelleRuntime
    scope: LlmScope

    def check_recipient(self, conversation_id: str | None, to: str | None) -> None:
        """A tool error unless the send goes, as the client resolves it, to a conversation
        in scope and there to the owner or the whole group. A named conversation's scope is
        checked before the client resolves it: whether the agent knows a conversation out
        of scope is none of the model's business."""
        if conversation_id is not None:
            self.scope.check_conversation(conversation_id)
        found = self.runtime.agent.recipient(conversation_id=conversation_id, to=to)
        self.scope.check_conversation(found.conversation_id)
        if found.to != self.scope.owner_id and not found.is_group:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="llm_recipient_out_of_scope",
                translation_placeholders={"to": found.to, "conversation_id": found.conversation_id},
            )

    def request_in_scope(self, message_id: str) -> None:
        """A tool error if `message_id` is a request of a conversation out of scope."""
        request = self.runtime.agent.find_request(message_id)
        if request is not None:
            self.scope.check_conversation(request.conversation_id)

    def check_answerable(self, message_id: str) -> None:
        """A refusal unless the request was judged trusted when opened: a prompt-injected
        model must not answer a device nobody trusted (it would read what it is told)."""
        agent = self.runtime.agent
        request = agent.find_request(message_id)
        if request is not None:
            agent.trust.check_answerable(request)

    def listed(self, request: Request) -> bool:
        """Whether a view lists the request: in scope, and not from a key blocked now (a
        blocked key's later requests never reach the history at all)."""
        blocked = self.runtime.agent.trust.blocked_now(request)
        return self.scope.covers(request.conversation_id) and not blocked


def loaded_agents(hass: HomeAssistant) -> list[AgentRef]:
    entries: list[ConfigEntry[PacerelleRuntime]] = hass.config_entries.async_loaded_entries(DOMAIN)
    return [
        AgentRef(
            str(entry.data[CONF_AGENT_ID]),
            agent_name(entry),
            entry.runtime_data,
            LlmScope.of_entry(entry),
        )
        for entry in entries
    ]


def describe_agents(agents: list[AgentRef]) -> str:
    return ", ".join(f"{ref.name} ({ref.agent_id})" for ref in agents) or "none"


def resolve_agent(hass: HomeAssistant, wanted: str | None) -> AgentRef:
    """The agent a call addresses: the named one, or the only one loaded."""
    agents = loaded_agents(hass)
    if not agents:
        raise HomeAssistantError(translation_domain=DOMAIN, translation_key="llm_no_agent")
    if wanted is None:
        if len(agents) == 1:
            return agents[0]
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="llm_agent_required",
            translation_placeholders={"agents": describe_agents(agents)},
        )
    folded = wanted.strip().casefold()
    by_id = [ref for ref in agents if ref.agent_id.casefold() == folded]
    by_name = [ref for ref in agents if ref.name.casefold() == folded]
    if len(by_id) == 1 or len(by_name) == 1:
        return (by_id or by_name)[0]
    if by_name:  # two agents with one name: only the id tells them apart
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="llm_agent_required",
            translation_placeholders={"agents": describe_agents(by_name)},
        )
    raise HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key="llm_unknown_agent",
        translation_placeholders={"agent": wanted, "agents": describe_agents(agents)},
    )


def tool_schema(fields: Mapping[Any, Any]) -> probatio.Schema:
    """A tool's parameters: its own fields plus the optional agent."""
    return probatio.Schema(
        {**fields, probatio.Optional(ARG_AGENT, description=AGENT_FIELD_DESCRIPTION): str}
    )


def timestamp(value: float | None) -> str | None:
    return datetime.fromtimestamp(value, UTC).isoformat() if value is not None else None


def request_view(ref: AgentRef, request: Request) -> dict[str, Any]:
    """A request as the model sees it: the event's schema (no attachment keys), with the
    event's trust: the one judgement the request carries (client/trust/door.py)."""
    view = event_data(ref.runtime.entry_id, ref.agent_id, request)
    del view["entry_id"]
    return view


class PacerelleTool(llm.Tool):
    """A tool of the Pacerelle API: checks its arguments, finds the agent, maps errors."""

    integration = DOMAIN

    @override
    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext
    ) -> llm.ToolResult:
        # The API offers no tool to a user who is not an administrator (api.py); this holds
        # for a tool called on its own too.
        await async_require_admin(hass, llm_context.context, f"{DOMAIN} {self.name}")
        # Some models send every optional argument, as null, when they mean to omit it.
        given = {key: value for key, value in tool_input.tool_args.items() if value is not None}
        args: dict[str, Any] = self.parameters(given)
        ref = resolve_agent(hass, args.pop(ARG_AGENT, None))
        with tool_errors(hass, hass.config_entries.async_get_entry(ref.runtime.entry_id)):
            data = await self.run(hass, ref, args)
        return llm.ToolResult(data=data)

    @abstractmethod
    async def run(self, hass: HomeAssistant, ref: AgentRef, args: dict[str, Any]) -> dict[str, Any]:
        """The tool's work on checked arguments; its JSON result."""
