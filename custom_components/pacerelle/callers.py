"""Who calls an action or an LLM tool, and what Home Assistant lets them do through it.

Home Assistant's own boundary, drawn as its admin services and entity services draw it:
- no user (an automation, Home Assistant itself, a voice satellite) and administrators may
  use everything;
- any other user (a wall tablet's, a child's or a guest's account, and every script or
  conversation agent that runs for them) may send and ask as the home, nothing else: only
  into a conversation named by its entity (or none: the owner's), an entity they may
  control, with snapshots only of cameras they may read, and with no raw conversation,
  recipient, request id or file path (`check_sender`). Reading what arrived, deciding
  trust, dropping the queue and the LLM API are for administrators (`require_admin`).
A refusal is `NotAllowed`: Home Assistant's Unauthorized, translated, naming the action or
the caller's own entity and nothing of the home (no code, no text).
"""

from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.auth.permissions.const import POLICY_CONTROL, POLICY_READ
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import Unauthorized

from .const import DOMAIN

# The fields a user who is not an administrator may not give a send: raw ids reach any
# conversation or request, a path any file of the allowed folders.
ADMIN_FIELDS: Final = (
    "conversation_id",
    "to",
    "to_device_id",
    "source_message_id",
    "attachments",
)


class NotAllowed(Unauthorized):
    """Home Assistant's Unauthorized, with a translated message of the integration's."""

    def __init__(
        self,
        context: Context | None,
        key: str,
        *,
        entity_id: str | None = None,
        permission: str | None = None,
        **placeholders: str,
    ) -> None:
        super().__init__(context=context, entity_id=entity_id, permission=permission)
        self.translation_domain = DOMAIN
        self.translation_key = key
        shown = {**placeholders, **({"entity_id": entity_id} if entity_id else {})}
        self.translation_placeholders = shown
        self.generate_message = True
        self._message = None


async def async_limited_user(hass: HomeAssistant, context: Context | None) -> User | None:
    """The calling user when Home Assistant limits them (not an administrator); None for an
    administrator or a call of no user. An unknown user is refused."""
    if context is None or context.user_id is None:
        return None
    user = await hass.auth.async_get_user(context.user_id)
    if user is None:
        raise NotAllowed(context, "caller_unknown")
    return None if user.is_admin else user


async def async_require_admin(hass: HomeAssistant, context: Context | None, action: str) -> None:
    """Refused unless an administrator (or no user) calls `action`."""
    if await async_limited_user(hass, context) is not None:
        raise NotAllowed(context, "admin_required", action=action)


def check_sender(
    user: User,
    context: Context,
    data: dict[str, Any],
    conversation_entities: list[str],
) -> None:
    """What a limited user's send may do: no admin field, and every entity it reaches (its
    conversation's `conversation_entities`, its cameras) within the user's permissions."""
    given = [name for name in ADMIN_FIELDS if data.get(name) not in (None, "", [])]
    if given:
        raise NotAllowed(context, "admin_fields", fields=", ".join(given))
    if not conversation_entities:
        raise NotAllowed(context, "conversation_not_named")
    for entity_id in conversation_entities:
        if not user.permissions.check_entity(entity_id, POLICY_CONTROL):
            raise NotAllowed(
                context, "conversation_not_allowed", entity_id=entity_id, permission=POLICY_CONTROL
            )
    for entity_id in data.get("camera_snapshots") or []:
        if not user.permissions.check_entity(entity_id, POLICY_READ):
            raise NotAllowed(
                context, "camera_not_allowed", entity_id=entity_id, permission=POLICY_READ
            )
