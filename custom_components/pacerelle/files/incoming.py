"""The one door from a sender's attachment metadata to a file path.

Everything in an incoming message is the sender's (or the relay's) choice: the attachment
`id`, `name` and `mime`, and the message id. Only `name` and the message id ever reach a
path, and only reduced to one safe base name each; when nothing safe remains the name is
ours (`attachment-<n>` with an extension from a fixed list of types), never the raw id.
This module does no I/O: `file_access.write_new_file` creates the file without following
links and checks again, on the opened folders, that it stays inside.
"""

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..limits import MAX_FILE_NAME_BYTES

FALLBACK_STEM: Final = "attachment"
FALLBACK_MESSAGE_FOLDER: Final = "message"
# The only extensions a fallback name gets: what a phone sends, by MIME type.
FALLBACK_EXTENSIONS: Final[Mapping[str, str]] = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/heic": ".heic",
    "video/mp4": ".mp4",
    "video/quicktime": ".mov",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "audio/ogg": ".ogg",
    "application/pdf": ".pdf",
    "text/plain": ".txt",
}
# Letters, digits, "_", ".", "-" and spaces survive; anything else (separators, NUL,
# control characters, lone surrogates) becomes "_".
_UNSAFE: Final = re.compile(r"[^\w.\- ]+")


class UnsafePathError(ValueError):
    """No safe path inside the folder can be made from this metadata."""


@dataclass(frozen=True, slots=True)
class IncomingPath:
    """Where a file goes: `folder/[subfolder/]file_name`, each part one plain name."""

    folder: str
    subfolder: str | None
    file_name: str

    @property
    def path(self) -> str:
        parts = [self.subfolder] if self.subfolder else []
        return os.path.join(self.folder, *parts, self.file_name)


def _fit_bytes(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def safe_base_name(value: object) -> str:
    """One plain file name from `value` (no folders, no leading dot), or "" if none is left."""
    if not isinstance(value, str):
        return ""
    base = value.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", base).strip(" .")
    stem, suffix = os.path.splitext(cleaned)
    if len(suffix) > 16:
        stem, suffix = cleaned, ""
    fitted = _fit_bytes(stem, MAX_FILE_NAME_BYTES - len(suffix)).rstrip(" .") + suffix
    return fitted.strip(" .")


def fallback_name(index: int, mime: object) -> str:
    """Our own name for the `index`-th (from 0) attachment whose name gave nothing."""
    extension = FALLBACK_EXTENSIONS.get(mime, "") if isinstance(mime, str) else ""
    return f"{FALLBACK_STEM}-{index + 1}{extension}"


def _is_plain_name(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
        and len(name.encode("utf-8", "surrogatepass")) <= MAX_FILE_NAME_BYTES
    )


def absolute_path(path: object) -> str:
    """`path` normalised, if it is an absolute path the file system can name; else
    UnsafePathError."""
    if not (isinstance(path, str) and os.path.isabs(path) and _encodable(path)):
        raise UnsafePathError("not an absolute path")
    return os.path.normpath(path)


def _encodable(path: str) -> bool:
    """No NUL, and a name the file system encoding can write (no lone surrogate)."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return False
    return "\0" not in path


def incoming_file_path(
    folder: str,
    attachment: Mapping[str, Any],
    index: int,
    *,
    message_id: object = None,
) -> IncomingPath:
    """Where the `index`-th attachment goes in `folder` (in a per-message sub-folder when
    `message_id` is given), or UnsafePathError.

    `folder` is ours (the options' media folder or the action's `folder`), the rest is the
    sender's. The result is checked the way it will be used: every part a plain name, and
    the joined path, once normalised, still inside `folder`.
    """
    root = absolute_path(folder)
    name = safe_base_name(attachment.get("name")) or fallback_name(index, attachment.get("mime"))
    subfolder = None
    if message_id is not None:
        subfolder = safe_base_name(message_id) or FALLBACK_MESSAGE_FOLDER
    target = IncomingPath(root, subfolder, name)
    parts = [name] if subfolder is None else [subfolder, name]
    joined = target.path
    if (
        not all(_is_plain_name(part) for part in parts)
        or os.path.normpath(joined) != joined
        or os.path.commonpath([root, joined]) != root
        or joined == root
    ):
        raise UnsafePathError(f"no safe path for attachment {index + 1}")
    return target
