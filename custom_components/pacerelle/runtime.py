"""What one running agent gives the integration: `entry.runtime_data`, built whole.

coordinator.py builds it (and hosts the agent); the platforms, actions and the Assist
bridge read it. Every field is set before the runtime exists: no part of it is optional.
"""

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry

from .client import Agent, AgentStatus, DecryptFailures
from .trust import TrustManager
from .voice.transcripts import VoiceNotes


@dataclass(frozen=True, slots=True)
class PacerelleRuntime:
    """`entry.runtime_data`: the running agent and what the integration builds on it."""

    agent: Agent
    entry_id: str
    # The trust decisions kept in Home Assistant and the client's door built on them.
    trust: TrustManager
    # Voice notes' transcripts and problems, for the Assist bridge (voice/transcripts.py).
    voice: VoiceNotes
    # Messages that did not decrypt, per person and device (issues/decrypt.py).
    decryption_failures: DecryptFailures

    @property
    def status(self) -> AgentStatus:
        return self.agent.status


# The typed config entry, defined once next to the runtime data it types.
type PacerelleConfigEntry = ConfigEntry[PacerelleRuntime]
