"""The agent's settings (config entry options), each with a default that works.

An entry created by the config flow has no options at all: every setting falls back to its
default here. A later setting is a new field with a default plus its line in the options
flow; old entries then keep working without a migration, and a setting removed is ignored
(`encrypted`, until 0.2: a development override now, const.py).
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final, Self

CONF_MEDIA_FOLDER: Final = "media_folder"
CONF_ASSIST_AGENT: Final = "assist_agent"
CONF_LLM_CONVERSATIONS: Final = "llm_conversations"
CONF_ASSIST_IN_GROUPS: Final = "assist_in_groups"
CONF_VOICE_PIPELINE: Final = "voice_pipeline"
CONF_VOICE_TRANSCRIPTS: Final = "voice_transcripts"
CONF_VOICE_SPOKEN_ANSWER: Final = "voice_spoken_answer"


@dataclass(frozen=True)
class AgentOptions:
    """Typed view of `entry.options`."""

    # Where incoming attachments are saved; empty means they are not downloaded by themselves.
    media_folder: str = ""
    # The conversation agent that answers through Assist; None means no Assist bridge.
    assist_agent: str | None = None
    # The conversations the LLM API may read and write; empty means the owner's direct
    # conversation only (see llm_tools.LlmScope).
    llm_conversations: tuple[str, ...] = ()
    # The Assist bridge also answers trusted members' messages in groups (assist.py).
    assist_in_groups: bool = False
    # The Assist pipeline that transcribes voice notes (voice.py): its id, "preferred" (Home
    # Assistant's preferred one at each note), or None: none transcribed ("No voice").
    voice_pipeline: str | None = None
    # Transcribe every trusted device's voice notes, even with the Assist bridge off.
    voice_transcripts: bool = False
    # Also answer a voice note with the pipeline's text-to-speech, as an audio attachment.
    voice_spoken_answer: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Self:
        """The settings of an entry; unknown keys are ignored, missing ones take defaults."""
        names = {field.name for field in fields(cls)}
        known = {name: value for name, value in options.items() if name in names}
        if CONF_LLM_CONVERSATIONS in known:
            known[CONF_LLM_CONVERSATIONS] = tuple(str(c) for c in known[CONF_LLM_CONVERSATIONS])
        return cls(**known)

    def as_options(self) -> dict[str, Any]:
        options = asdict(self)
        options[CONF_LLM_CONVERSATIONS] = list(self.llm_conversations)
        return options
