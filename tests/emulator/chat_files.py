"""The files of a conversation, decrypted as the person's device opens them, for the chat page.

`GET /_emulator/conversations/{conversation_id}/files/{message_id}/{attachment_id}` serves
one attachment of a message the person sent or received. The agent (or a hostile app)
chooses the name and the type inside the encryption, so the type served is never theirs
as is: an `audio/...` type is served as audio (the page's <audio> player), the picture
types the page shows inline as themselves, everything else as `application/octet-stream`
to download; always with `nosniff` and a sandboxing CSP, so no file runs as a page of the
emulator's origin. Single byte ranges are answered (browsers seek in audio with them).
"""

import json
import re
from typing import Any, Final

from aiohttp import web
from aiohttp.helpers import content_disposition_header

from .context import Emulator, emulator_of
from .http_util import ApiError
from .human_payloads import UnreadableFileError, open_file_bytes
from .state import Json

PREFIX: Final = "/_emulator"
DOWNLOAD_TYPE: Final = "application/octet-stream"
INLINE_IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
# A bare media type: no parameters, nothing a header or a sniffer could be steered with.
_AUDIO_TYPE: Final = re.compile(r"audio/[a-z0-9][a-z0-9.+-]{0,63}")
_SAFETY_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Accept-Ranges": "bytes",
}


def served_type(mime: Any) -> str:
    """The Content-Type a file is served with: audio as audio, some pictures, else bytes."""
    base = str(mime).partition(";")[0].strip().lower() if isinstance(mime, str) else ""
    if _AUDIO_TYPE.fullmatch(base) or base in INLINE_IMAGE_TYPES:
        return base
    return DOWNLOAD_TYPE


def _attachments_of(entry: Json, *, sent: bool) -> list[Any]:
    """The secret attachments of a logged message (what its plaintext carries)."""
    if entry.get("kind") != "chat.message":
        return []
    payload = entry.get("payload")
    if sent:
        try:
            payload = json.loads(str(entry.get("text")))
        except json.JSONDecodeError:
            return []
    files = payload.get("attachments") if isinstance(payload, dict) else None
    return files if isinstance(files, list) else []


def find_attachment(
    emulator: Emulator, conversation_id: str, message_id: str, attachment_id: str
) -> Json:
    """The attachment `attachment_id` of a message of this conversation, or 404."""
    log = emulator.state.conversations.get(conversation_id)
    if log is None:
        raise ApiError(404, "unknown conversation")
    logged = [(entry, True) for entry in log.sent] + [(entry, False) for entry in log.inbox]
    for entry, sent in logged:
        if entry.get("message_id") != message_id:
            continue
        for item in _attachments_of(entry, sent=sent):
            if isinstance(item, dict) and item.get("id") == attachment_id:
                return item
    raise ApiError(404, "unknown file")


def _ranged(request: web.Request, data: bytes) -> tuple[int, bytes, dict[str, str]]:
    """(status, body, headers) for the request's Range, if it has one we can answer."""
    if "Range" not in request.headers:
        return 200, data, {}
    try:
        wanted = request.http_range
    except ValueError:
        wanted = None
    start, stop, _ = wanted.indices(len(data)) if wanted else (0, 0, 1)
    if wanted is None or start >= stop:
        return 416, b"", {"Content-Range": f"bytes */{len(data)}"}
    return 206, data[start:stop], {"Content-Range": f"bytes {start}-{stop - 1}/{len(data)}"}


async def get_file(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    match = request.match_info
    item = find_attachment(
        emulator, match["conversation_id"], match["message_id"], match["attachment_id"]
    )
    try:
        # Only this conversation's blobs: a message may name any blob id.
        data = open_file_bytes(emulator, item, match["conversation_id"])
    except UnreadableFileError as err:
        raise ApiError(404, f"the file cannot be opened: {err}") from err
    content_type = served_type(item.get("mime"))
    disposition = "attachment" if content_type == DOWNLOAD_TYPE else "inline"
    name = str(item.get("name") or "file")
    status, body, extra = _ranged(request, data)
    headers = {
        **_SAFETY_HEADERS,
        **extra,
        "Content-Disposition": content_disposition_header(disposition, filename=name),
    }
    return web.Response(status=status, body=body, content_type=content_type, headers=headers)


def routes() -> list[web.AbstractRouteDef]:
    path = f"{PREFIX}/conversations/{{conversation_id}}/files/{{message_id}}/{{attachment_id}}"
    return [web.get(path, get_file)]
