"""The integration's actions, registered once for all agents (in `async_setup`).

Each action names its agent by config entry or device (or uses the only one); those that
write to or read a conversation also take a named one by its entity
(actions/conversation.py). See actions/send.py, actions/ask.py and actions/manage.py for
what each does.
"""

from collections.abc import Callable, Coroutine
from typing import Any, Final

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers.typing import VolSchemaType

from .actions.ask import ASK_SCHEMA, async_ask
from .actions.manage import (
    DOWNLOAD_SCHEMA,
    GET_HISTORY_SCHEMA,
    GET_STATUS_SCHEMA,
    MARK_PROCESSED_SCHEMA,
    async_download_attachment,
    async_get_history,
    async_get_status,
    async_mark_processed,
)
from .actions.send import (
    CLEAR_QUEUE_SCHEMA,
    SEND_MESSAGE_SCHEMA,
    SEND_WIDGET_SCHEMA,
    UPDATE_WIDGET_SCHEMA,
    async_clear_queue,
    async_send_message,
    async_send_widget,
    async_update_widget,
)
from .actions.trust import (
    BLOCK_SCHEMA,
    TRUST_SCHEMA,
    async_block_device,
    async_trust_device,
)
from .const import DOMAIN

SERVICE_SEND_MESSAGE: Final = "send_message"
SERVICE_SEND_WIDGET: Final = "send_widget"
SERVICE_UPDATE_WIDGET: Final = "update_widget"
SERVICE_ASK: Final = "ask"
SERVICE_MARK_PROCESSED: Final = "mark_processed"
SERVICE_GET_HISTORY: Final = "get_history"
SERVICE_GET_STATUS: Final = "get_status"
SERVICE_DOWNLOAD_ATTACHMENT: Final = "download_attachment"
SERVICE_TRUST_DEVICE: Final = "trust_device"
SERVICE_BLOCK_DEVICE: Final = "block_device"
SERVICE_CLEAR_QUEUE: Final = "clear_queue"

type Handler = Callable[[ServiceCall], Coroutine[Any, Any, ServiceResponse]]

_SERVICES: Final[tuple[tuple[str, Handler, VolSchemaType, SupportsResponse], ...]] = (
    (SERVICE_SEND_MESSAGE, async_send_message, SEND_MESSAGE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_SEND_WIDGET, async_send_widget, SEND_WIDGET_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_UPDATE_WIDGET, async_update_widget, UPDATE_WIDGET_SCHEMA, SupportsResponse.OPTIONAL),
    # The answer is the point of asking; a script without response_variable still waits.
    (SERVICE_ASK, async_ask, ASK_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_MARK_PROCESSED, async_mark_processed, MARK_PROCESSED_SCHEMA, SupportsResponse.NONE),
    (SERVICE_GET_HISTORY, async_get_history, GET_HISTORY_SCHEMA, SupportsResponse.ONLY),
    (SERVICE_GET_STATUS, async_get_status, GET_STATUS_SCHEMA, SupportsResponse.ONLY),
    (
        SERVICE_DOWNLOAD_ATTACHMENT,
        async_download_attachment,
        DOWNLOAD_SCHEMA,
        SupportsResponse.OPTIONAL,
    ),
    (SERVICE_TRUST_DEVICE, async_trust_device, TRUST_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_BLOCK_DEVICE, async_block_device, BLOCK_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_CLEAR_QUEUE, async_clear_queue, CLEAR_QUEUE_SCHEMA, SupportsResponse.OPTIONAL),
)


def async_setup_services(hass: HomeAssistant) -> None:
    """Register every Pacerelle action (once, whatever the number of agents)."""
    for name, handler, schema, supports_response in _SERVICES:
        hass.services.async_register(
            DOMAIN, name, handler, schema=schema, supports_response=supports_response
        )
