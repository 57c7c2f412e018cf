"""The notify entity of an agent: `notify.send_message` writes to the owner's conversation.

The message goes to the device the owner last wrote from. A title, when given, becomes the
first line. Sending needs a session, which the owner's first message opens ("the user
speaks first"): before that, the action fails with a translated error that says so.
"""

from typing import override

from homeassistant.components.notify import NotifyEntity, NotifyEntityDescription
from homeassistant.components.notify.const import NotifyEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .actions.common import client_errors
from .entity import REACHABLE_STATES, PacerelleEntity
from .runtime import PacerelleConfigEntry

# One message at a time per agent: the sender serialises anyway, and order matters.
PARALLEL_UPDATES = 1

OWNER = NotifyEntityDescription(key="owner", translation_key="owner")


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([PacerelleNotify(entry, OWNER)])


class PacerelleNotify(PacerelleEntity, NotifyEntity):
    _attr_name = None  # the agent's main feature: named like its device, notify.<agent>
    _attr_supported_features = NotifyEntityFeature.TITLE

    @property
    @override
    def available(self) -> bool:
        return self.status.state in REACHABLE_STATES

    @override
    async def async_send_message(self, message: str, title: str | None = None) -> None:
        text = f"{title}\n{message}" if title else message
        # The same translated errors as pacerelle.send_message gives.
        with client_errors(self.hass, self.entry):
            await self.runtime.agent.send_text(text)
