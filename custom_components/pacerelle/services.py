"""The integration's actions, registered once for all agents (in `async_setup`).

Each is checked first for who calls it (callers.py): `ADMIN` actions read what arrived,
decide trust or drop the queue, for administrators only; `SEND` actions write as the home,
for any user within their own Home Assistant permissions.

Each action names its agent by config entry or device (or uses the only one); those that
write to or read a conversation also take a named one by its entity
(actions/conversation.py). See actions/send.py, actions/ask.py and actions/manage.py for
what each does.
"""

from collections.abc import Callable, Coroutine
from enum import Enum, auto
from typing import Any, Final

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers.typing import VolSchemaType

from .actions.ask import ASK_SCHEMA, async_ask
from .actions.common import reached_conversations
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
from .callers import async_limited_user, async_require_admin, check_sender
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


class Caller(Enum):
    """Who may call an action (callers.py)."""

    ADMIN = auto()  # reads what arrived, decides trust, drops the queue
    SEND = auto()  # writes as the home: anyone, within their own permissions


_OPTIONAL = SupportsResponse.OPTIONAL
_SERVICES: Final[tuple[tuple[str, Handler, VolSchemaType, SupportsResponse, Caller], ...]] = (
    (SERVICE_SEND_MESSAGE, async_send_message, SEND_MESSAGE_SCHEMA, _OPTIONAL, Caller.SEND),
    (SERVICE_SEND_WIDGET, async_send_widget, SEND_WIDGET_SCHEMA, _OPTIONAL, Caller.SEND),
    (SERVICE_UPDATE_WIDGET, async_update_widget, UPDATE_WIDGET_SCHEMA, _OPTIONAL, Caller.SEND),
    # The answer is the point of asking; a script without response_variable still waits.
    (SERVICE_ASK, async_ask, ASK_SCHEMA, _OPTIONAL, Caller.SEND),
    (
        SERVICE_MARK_PROCESSED,
        async_mark_processed,
        MARK_PROCESSED_SCHEMA,
        SupportsResponse.NONE,
        Caller.ADMIN,
    ),
    (
        SERVICE_GET_HISTORY,
        async_get_history,
        GET_HISTORY_SCHEMA,
        SupportsResponse.ONLY,
        Caller.ADMIN,
    ),
    (SERVICE_GET_STATUS, async_get_status, GET_STATUS_SCHEMA, SupportsResponse.ONLY, Caller.ADMIN),
    (
        SERVICE_DOWNLOAD_ATTACHMENT,
        async_download_attachment,
        DOWNLOAD_SCHEMA,
        _OPTIONAL,
        Caller.ADMIN,
    ),
    (SERVICE_TRUST_DEVICE, async_trust_device, TRUST_SCHEMA, _OPTIONAL, Caller.ADMIN),
    (SERVICE_BLOCK_DEVICE, async_block_device, BLOCK_SCHEMA, _OPTIONAL, Caller.ADMIN),
    (SERVICE_CLEAR_QUEUE, async_clear_queue, CLEAR_QUEUE_SCHEMA, _OPTIONAL, Caller.ADMIN),
)


def _checked(name: str, handler: Handler, caller: Caller) -> Handler:
    """The handler, run only once its caller may call it (callers.py)."""
    action = f"{DOMAIN}.{name}"

    async def checked(call: ServiceCall) -> ServiceResponse:
        if caller is Caller.ADMIN:
            await async_require_admin(call.hass, call.context, action)
        elif (user := await async_limited_user(call.hass, call.context)) is not None:
            check_sender(user, call.context, dict(call.data), reached_conversations(call))
        return await handler(call)

    return checked


def async_setup_services(hass: HomeAssistant) -> None:
    """Register every Pacerelle action (once, whatever the number of agents)."""
    for name, handler, schema, supports_response, caller in _SERVICES:
        hass.services.async_register(
            DOMAIN,
            name,
            _checked(name, handler, caller),
            schema=schema,
            supports_response=supports_response,
        )
