"""The emulator's access log, with secrets in query strings replaced.

The gateway takes its runtime token as `/ws/agent?token=...` (PROTOCOL.md), and aiohttp's
default access log prints the whole request line: the demo would write live tokens to its
log. Any query parameter whose name looks like a secret is logged as `[redacted]`.
"""

import logging
import re
from urllib.parse import unquote_plus

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse

REDACTED = "[redacted]"
ADMIN_PREFIX = "/_emulator/"
# Names of query parameters that carry (or may carry) a secret: tokens, OAuth codes and
# verifiers, keys, secrets, passwords, signatures.
SECRET_PARAMETER = re.compile(
    r"token|code|key|secret|verifier|password|passwd|signature|auth|session|credential",
    re.IGNORECASE,
)


def redact_query(query_string: str) -> str:
    """The query string with the value of every secret-looking parameter replaced.

    A part without `=` is replaced whole: nothing tells it apart from a bare secret.
    """
    parts = []
    for part in query_string.split("&") if query_string else []:
        name, equals, _value = part.partition("=")
        if not equals:
            parts.append(REDACTED)
        elif SECRET_PARAMETER.search(unquote_plus(name)):
            parts.append(f"{name}={REDACTED}")
        else:
            parts.append(part)
    return "&".join(parts)


def redacted_target(request: BaseRequest) -> str:
    """The request's path and query as it may be logged."""
    query = redact_query(request.query_string)
    return request.path + (f"?{query}" if query else "")


def _is_polling(request: BaseRequest, response: StreamResponse) -> bool:
    # The chat page reads the admin API every second: at INFO level that would bury the rest.
    return (
        request.method == "GET" and request.path.startswith(ADMIN_PREFIX) and response.status < 400
    )


class RedactingAccessLogger(AbstractAccessLogger):
    """One line per request: client, request line (query redacted), status, size, time.

    Successful admin reads (the chat page's polling) are logged at DEBUG (`--verbose`).
    """

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        self.logger.log(
            logging.DEBUG if _is_polling(request, response) else logging.INFO,
            '%s "%s %s HTTP/%d.%d" %d %d %.3fs',
            request.remote,
            request.method,
            redacted_target(request),
            request.version.major,
            request.version.minor,
            response.status,
            response.body_length,
            time,
        )
