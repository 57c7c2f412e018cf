"""Files in and out: saving incoming attachments, reading files and snapshots to send.

Every path must be one Home Assistant allows (`allowlist_external_dirs`); reads and writes
run in the executor. Saved files never overwrite: a second file with the same name gets a
numbered one. Incoming files go to `<folder>/<message id>/<their name>`.
"""

import logging
import mimetypes
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from .client.errors import PacerelleError
from .client.inbox import Request
from .const import DOMAIN

_LOGGER = logging.getLogger(__name__)

# What the relay takes (25 MiB of ciphertext), less the GCM tag.
MAX_UPLOAD_BYTES: Final = 25 * 1024 * 1024 - 16
MAX_ATTACHMENTS: Final = 10
MAX_FILE_NAME_CHARS: Final = 120
DEFAULT_MIME: Final = "application/octet-stream"
_UNSAFE = re.compile(r"[^\w.\- ]+")

type Download = Callable[[Mapping[str, Any]], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class OutgoingFile:
    content: bytes
    name: str
    mime: str


def safe_file_name(name: Any, fallback: str) -> str:
    """A plain file name (no folders, no leading dot) from what the sender called it."""
    base = os.path.basename(str(name or "").replace("\\", "/"))
    cleaned = _UNSAFE.sub("_", base).strip(" .")[:MAX_FILE_NAME_CHARS]
    return cleaned or fallback


def _free_path(folder: str, name: str) -> str:
    stem, suffix = os.path.splitext(name)
    candidate = os.path.join(folder, name)
    number = 1
    while os.path.exists(candidate):
        candidate = os.path.join(folder, f"{stem} ({number}){suffix}")
        number += 1
    return candidate


def _write_new(folder: str, name: str, content: bytes) -> str:
    """Write a new file in `folder` (made if needed); its path (blocking)."""
    os.makedirs(folder, exist_ok=True)
    path = _free_path(folder, name)
    with open(path, "xb") as file:
        file.write(content)
    return path


def check_allowed_folder(hass: HomeAssistant, folder: str) -> str:
    """An absolute folder Home Assistant allows, or a ServiceValidationError."""
    if not os.path.isabs(folder) or not hass.config.is_allowed_path(folder):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="path_not_allowed",
            translation_placeholders={"path": folder},
        )
    return os.path.normpath(folder)


async def async_save(hass: HomeAssistant, folder: str, name: str, content: bytes) -> str:
    """Save `content` as a new file in an allowed folder; its path."""
    folder = check_allowed_folder(hass, folder)
    try:
        return await hass.async_add_executor_job(_write_new, folder, name, content)
    except OSError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="file_write_failed",
            translation_placeholders={"path": folder, "error": str(err)},
        ) from err


async def async_save_incoming(
    hass: HomeAssistant, folder: str, request: Request, download: Download
) -> dict[str, str | None]:
    """Download and decrypt each file of `request` into `folder`; attachment id -> path."""
    saved: dict[str, str | None] = {}
    target = os.path.join(folder, safe_file_name(request.message_id, "message"))
    for item in request.attachments:
        attachment_id = str(item.get("id"))
        try:
            content = await download(item)
            name = safe_file_name(item.get("name"), attachment_id)
            saved[attachment_id] = await async_save(hass, target, name, content)
        except (PacerelleError, HomeAssistantError) as err:
            _LOGGER.warning(
                "Could not save attachment %s of message %s: %s",
                attachment_id,
                request.message_id,
                err,
            )
            saved[attachment_id] = None
    return saved


def _read_file(path: str) -> bytes | None:
    """The file's bytes, or None when it is too big (blocking)."""
    if os.path.getsize(path) > MAX_UPLOAD_BYTES:
        return None
    with open(path, "rb") as file:
        return file.read()


async def async_read_file(hass: HomeAssistant, path: str) -> OutgoingFile:
    """A file to send: inside the allowlist, existing, and small enough."""
    if not os.path.isabs(path) or not hass.config.is_allowed_path(path):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="path_not_allowed",
            translation_placeholders={"path": path},
        )
    try:
        content = await hass.async_add_executor_job(_read_file, path)
    except OSError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="file_unreadable",
            translation_placeholders={"path": path, "error": err.strerror or str(err)},
        ) from err
    if content is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="file_too_large",
            translation_placeholders={"path": path, "limit": str(MAX_UPLOAD_BYTES)},
        )
    name = safe_file_name(path, "file")
    return OutgoingFile(content, name, mimetypes.guess_type(name)[0] or DEFAULT_MIME)


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
    return OutgoingFile(image.content, f"{entity_id.split('.', 1)[-1]}{extension}", mime)
