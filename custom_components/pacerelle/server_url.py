"""Which Pacerelle server URLs an agent may use: https, or plain http on this machine only.

The installation token and every runtime token travel in requests to this URL, so plain
http is accepted only where no network carries them: loopback addresses (127.0.0.0/8,
::1) and the name `localhost`, where the emulator runs. Private addresses (RFC 1918,
`.local`) are refused as well: a home network (Wi-Fi, other devices) is exactly where a
token could be read, and the installation token lives until it is revoked. A test server
on another machine is reached over https or through an SSH tunnel to a loopback port.
"""

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost"})


class InsecureServerUrlError(ValueError):
    """A plain http URL that would send tokens over a network in cleartext."""


def normalize_server_url(url: str) -> str:
    """The base URL without trailing slash; ValueError unless absolute http(s) without query."""
    stripped = url.strip().rstrip("/")
    parts = urlsplit(stripped)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an absolute http(s) URL")
    if parts.query or parts.fragment:
        raise ValueError(f"{url!r} must not carry a query or fragment")
    return stripped


def checked_server_url(url: str) -> str:
    """The normalized URL; ValueError if malformed, InsecureServerUrlError if http off loopback."""
    normalized = normalize_server_url(url)
    parts = urlsplit(normalized)
    if parts.scheme == "http" and not _is_loopback(parts.hostname or ""):
        raise InsecureServerUrlError(f"{normalized!r} would carry tokens in cleartext")
    return normalized


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
