"""The conversations the entry's subentries name, told to the agent.

The agent's store keeps each named conversation's recipient while it is named (client:
`Agent.name_conversations`), so a subentry holds only its conversation id, as
telegram_bot's holds its chat id, and whom a send to it reaches is the client's to say.
A subentry from before also holds the `recipient` the client gave it then: handed to the
agent once at setup, and removed from the subentry once the store has kept it (a failed
commit leaves it for the next setup). Subentries added or removed later are told at once.
"""

import logging
from collections.abc import Mapping
from typing import Final

from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from .client import PacerelleError
from .const import CONF_CONVERSATION_ID, SUBENTRY_CONVERSATION
from .entity import named_conversations
from .runtime import PacerelleConfigEntry

_LOGGER = logging.getLogger(__name__)

LEGACY_RECIPIENT: Final = "recipient"
"""What subentries made before the store kept recipients hold beside the conversation id."""


def _legacy_recipients(entry: ConfigEntry) -> dict[str, str]:
    """Conversation -> the recipient a subentry from before holds (only those)."""
    found: dict[str, str] = {}
    for subentry in entry.subentries.values():
        recipient = subentry.data.get(LEGACY_RECIPIENT)
        if subentry.subentry_type == SUBENTRY_CONVERSATION and isinstance(recipient, str):
            found[str(subentry.data[CONF_CONVERSATION_ID])] = recipient
    return found


async def _async_tell(entry: PacerelleConfigEntry, known: Mapping[str, str]) -> bool:
    """The agent told which conversations are named; False if its store could not keep it."""
    ids = [named.conversation_id for named in named_conversations(entry)]
    try:
        await entry.runtime_data.agent.name_conversations(ids, known)
    except PacerelleError as err:
        _LOGGER.warning("Could not keep the named conversations of %s: %s", entry.title, err)
        return False
    return True


async def async_name_conversations(hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
    """Tell the agent its named conversations, move the recipients of subentries from
    before into its store, and tell it again at each change of the entry."""
    legacy = _legacy_recipients(entry)
    if await _async_tell(entry, legacy) and legacy:
        for subentry in list(entry.subentries.values()):
            if LEGACY_RECIPIENT in subentry.data:
                data = {k: v for k, v in subentry.data.items() if k != LEGACY_RECIPIENT}
                hass.config_entries.async_update_subentry(entry, subentry, data=data)
    told = frozenset(named.conversation_id for named in named_conversations(entry))

    @callback
    def entry_changed(change: ConfigEntryChange, changed: ConfigEntry) -> None:
        nonlocal told
        if change is not ConfigEntryChange.UPDATED or changed.entry_id != entry.entry_id:
            return
        now = frozenset(named.conversation_id for named in named_conversations(entry))
        if now != told:
            told = now
            entry.async_create_background_task(
                hass, _async_tell(entry, {}), "pacerelle named conversations"
            )

    entry.async_on_unload(
        async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, entry_changed)
    )
