"""Runtime tokens: requested with the installation token, renewed before they expire.

A runtime token lives 15 minutes. A fresh one is requested before every (re)connection;
REST calls reuse the current one until RENEW_FRACTION of its life has passed. Requests are
single-flight: concurrent callers share one request to the server.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from ..errors import ErrorKind, PacerelleAuthError
from ..limits import MAX_RENEW_MARGIN, MIN_LIFETIME, RENEW_FRACTION
from .answers import checked_seconds


class InstallationRevokedError(PacerelleAuthError):
    """The runtime-token endpoint refused the installation token: it was revoked."""

    kind = ErrorKind.REVOKED


class IssuedToken(Protocol):
    """What `POST /agent-connect/runtime-token` returns (agent_connect.RuntimeToken)."""

    @property
    def agent_token(self) -> str: ...

    @property
    def expires_in(self) -> float: ...


@dataclass(frozen=True, slots=True)
class RuntimeCredential:
    """A runtime token and when (monotonic clock) to renew it and when it expires."""

    token: str
    renew_at: float
    expires_at: float

    def usable(self, now: float) -> bool:
        return now < self.renew_at


def credential_from(issued: IssuedToken, now: float) -> RuntimeCredential:
    """Renew at 80% of the lifetime, and at least MAX_RENEW_MARGIN seconds before expiry.

    The lifetime is checked again here (finite, bounded), whoever fetched the token: an
    infinite or huge one would never be renewed, NaN would compare false everywhere.
    """
    lifetime = checked_seconds(issued.expires_in, "expires_in", low=MIN_LIFETIME)
    margin = min(lifetime * (1 - RENEW_FRACTION), MAX_RENEW_MARGIN)
    return RuntimeCredential(issued.agent_token, now + lifetime - margin, now + lifetime)


class RuntimeTokens:
    """The agent's current runtime token; `fetch` raises PacerelleAuthError once revoked."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[IssuedToken]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._current: RuntimeCredential | None = None
        self._lock = asyncio.Lock()

    @property
    def current(self) -> RuntimeCredential | None:
        return self._current

    async def valid(self) -> RuntimeCredential:
        """The current token, or a new one when none is held or it is due for renewal."""
        held = self._current
        if held is not None and held.usable(self._clock()):
            return held
        async with self._lock:
            held = self._current
            if held is not None and held.usable(self._clock()):
                return held
            return await self._renew()

    async def fresh(self) -> RuntimeCredential:
        """Always a newly issued token (before each gateway connection)."""
        async with self._lock:
            return await self._renew()

    def invalidate(self, token: str) -> None:
        """Forget `token` (the server refused it); the next call requests another."""
        if self._current is not None and self._current.token == token:
            self._current = None

    async def _renew(self) -> RuntimeCredential:
        try:
            issued = await self._fetch()
        except PacerelleAuthError as err:
            raise InstallationRevokedError(err.status, err.message) from err
        self._current = credential_from(issued, self._clock())
        return self._current
