"""Files in and out: saving incoming attachments, reading files and snapshots to send.

Every path must be one Home Assistant allows (`allowlist_external_dirs`), checked in the
executor (the check touches the disk) on what was actually opened: see files/access.py.
Saved files never overwrite: a second file with the same name gets a numbered one.
Incoming files go to `<folder>/<message id>/<their name>`, both names reduced to plain
base names by files/incoming.py, the one door from a sender's metadata to a path.
"""

import logging
import mimetypes
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from ..client import (
    BOUNDS,
    OutgoingFile,
    PacerelleError,
    Request,
)
from ..const import DOMAIN
from .access import (
    NOT_ALLOWED,
    NOT_REGULAR,
    TOO_LARGE,
    FileRefusedError,
    read_regular_file,
    write_new_file,
)
from .incoming import (
    IncomingPath,
    UnsafePathError,
    absolute_path,
    incoming_file_path,
    safe_base_name,
)

_LOGGER = logging.getLogger(__name__)

DEFAULT_MIME: Final = "application/octet-stream"
FALLBACK_OUTGOING_NAME: Final = "file"

# The client's Agent.download(message id, index): the file's checked, decrypted bytes.
type Download = Callable[[str, int], Awaitable[bytes]]


def _not_allowed(path: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key="path_not_allowed",
        translation_placeholders={"path": path},
    )


def _allowed_folder(hass: HomeAssistant, folder: str) -> bool:
    """Blocking: Home Assistant's allowlist check resolves the path on disk."""
    return hass.config.is_allowed_path(folder)


async def async_allowed_folder(hass: HomeAssistant, folder: str) -> str:
    """An absolute folder Home Assistant allows (normalised), or a ServiceValidationError."""
    try:
        chosen = absolute_path(folder)
    except UnsafePathError as err:
        raise _not_allowed(folder) from err
    if not await hass.async_add_executor_job(_allowed_folder, hass, chosen):
        raise _not_allowed(folder)
    return chosen


async def async_save(hass: HomeAssistant, target: IncomingPath, content: bytes) -> str:
    """Save `content` as a new file at `target` (numbered if taken); its path."""
    try:
        return await hass.async_add_executor_job(
            write_new_file, target, content, hass.config.is_allowed_path
        )
    except FileRefusedError as err:
        if err.reason == NOT_ALLOWED:
            raise _not_allowed(target.folder) from err
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="path_outside_folder",
            translation_placeholders={"path": target.folder},
        ) from err
    except OSError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="file_write_failed",
            translation_placeholders={"path": target.folder, "error": str(err)},
        ) from err


def target_of(folder: str, item: Mapping[str, Any], index: int, message_id: object) -> IncomingPath:
    """incoming_file_path, with a refusal as the translated error callers expect."""
    try:
        return incoming_file_path(folder, item, index, message_id=message_id)
    except UnsafePathError as err:
        raise _not_allowed(folder) from err


class DownloadTimeoutError(TimeoutError):
    """A file not downloaded in time: saved as unsaved, the message handed over anyway."""


async def async_save_incoming(
    hass: HomeAssistant, folder: str, request: Request, download: Download
) -> dict[str, str | None]:
    """Download and decrypt each file of `request` into `folder`; attachment id -> path."""
    saved: dict[str, str | None] = {}
    for index, item in enumerate(request.attachments):
        attachment_id = str(item.get("id"))
        try:
            target = target_of(folder, item, index, request.message_id)
            content = await download(request.message_id, index)
            saved[attachment_id] = await async_save(hass, target, content)
        except (PacerelleError, HomeAssistantError, DownloadTimeoutError) as err:
            _LOGGER.warning(
                "Could not save attachment %d of message %r: %s",
                index + 1,
                request.message_id,
                err,
            )
            saved[attachment_id] = None
    return saved


async def async_read_file(hass: HomeAssistant, path: str) -> OutgoingFile:
    """A file to send: a regular file inside the allowlist, small enough, read at once."""
    try:
        content = await hass.async_add_executor_job(
            partial(
                read_regular_file,
                path,
                hass.config.is_allowed_path,
                BOUNDS.file_bytes,
                config_dir=hass.config.config_dir,
            )
        )
    except FileRefusedError as err:
        if err.reason == TOO_LARGE:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="file_too_large",
                translation_placeholders={"path": path, "limit": str(BOUNDS.file_bytes)},
            ) from err
        if err.reason == NOT_REGULAR:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="file_not_regular",
                translation_placeholders={"path": path},
            ) from err
        raise _not_allowed(path) from err
    except OSError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="file_unreadable",
            translation_placeholders={"path": path, "error": err.strerror or str(err)},
        ) from err
    name = safe_base_name(path) or FALLBACK_OUTGOING_NAME
    return OutgoingFile(name, mimetypes.guess_type(name)[0] or DEFAULT_MIME, content)


async def async_camera_snapshot(hass: HomeAssistant, entity_id: str) -> OutgoingFile:
    """A still image of a camera entity, named after it."""
    # Imported here: the camera integration is only needed by those who send snapshots.
    from homeassistant.components.camera import async_get_image  # noqa: PLC0415

    try:
        image = await async_get_image(hass, entity_id)
    except HomeAssistantError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="snapshot_failed",
            translation_placeholders={"entity_id": entity_id, "error": str(err)},
        ) from err
    mime = image.content_type or "image/jpeg"
    extension = mimetypes.guess_extension(mime) or ".jpg"
    return OutgoingFile(f"{entity_id.split('.', 1)[-1]}{extension}", mime, image.content)
