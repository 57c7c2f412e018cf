"""The notify entity of an agent: `notify.send_message` writes to the owner's conversation.

The message goes to the device the owner last wrote from. A title, when given, becomes the
first line. Sending needs a session, which the owner's first message opens ("the user
speaks first"): before that, the action fails with a translated error that says so.
"""

from typing import Final, override

from homeassistant.components.notify import NotifyEntity, NotifyEntityDescription
from homeassistant.components.notify.const import NotifyEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import PacerelleConfigEntry
from .client.errors import PacerelleConnectionError, PacerelleError
from .client.sender import SendError
from .const import DOMAIN
from .entity import REACHABLE_STATES, PacerelleEntity, async_device_info

# One message at a time per agent: the sender serialises anyway, and order matters.
PARALLEL_UPDATES = 1

# What the person can fix -> translation keys shared with the actions.
_REFUSALS: Final = {"no_session": "not_spoken_yet", "too_long": "text_too_long"}

OWNER = NotifyEntityDescription(key="owner", translation_key="owner")


async def async_setup_entry(
    hass: HomeAssistant,
    entry: PacerelleConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    device_info = await async_device_info(hass, entry)
    async_add_entities([PacerelleNotify(entry, device_info, OWNER)])


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
        try:
            await self.runtime.agent.send_text(text)
        except PacerelleError as err:
            raise self._translated(err) from err

    def _translated(self, err: PacerelleError) -> HomeAssistantError:
        """The same translated errors as the pacerelle actions give."""
        placeholders = {"agent_name": self.agent_name, "message_id": ""}
        if isinstance(err, SendError) and err.reason in _REFUSALS:
            return ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key=_REFUSALS[err.reason],
                translation_placeholders={**placeholders, "detail": str(err)},
            )
        if isinstance(err, PacerelleConnectionError):
            return HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="not_connected",
                translation_placeholders=placeholders,
            )
        return HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="send_failed",
            translation_placeholders={**placeholders, "error": str(err)},
        )
