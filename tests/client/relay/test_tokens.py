"""The runtime token: reused until 80 % of its life (at most MAX_RENEW_MARGIN before its
end), fetched once for callers that ask together, forgotten when the server refuses it,
and a refused installation is a revocation, not a passing failure."""

import asyncio
import math
from dataclasses import dataclass

import pytest

from custom_components.pacerelle.client.errors import PacerelleAuthError, PacerelleError
from custom_components.pacerelle.client.limits import MAX_RENEW_MARGIN
from custom_components.pacerelle.client.relay.tokens import (
    InstallationRevokedError,
    RuntimeTokens,
    credential_from,
)


@dataclass
class Issued:
    agent_token: str
    expires_in: float


class Issuer:
    """Tokens t1, t2... each of `lifetime` seconds, on a clock the test moves."""

    def __init__(self, lifetime: float = 100.0) -> None:
        self.lifetime = lifetime
        self.issued = 0
        self.now = 0.0
        self.refuse = False

    async def fetch(self) -> Issued:
        await asyncio.sleep(0)  # callers meet while a fetch is under way
        if self.refuse:
            raise PacerelleAuthError(401, "installation revoked")
        self.issued += 1
        return Issued(f"t{self.issued}", self.lifetime)

    def tokens(self) -> RuntimeTokens:
        return RuntimeTokens(self.fetch, lambda: self.now)


async def test_a_token_is_reused_until_its_renewal_point() -> None:
    issuer = Issuer()
    tokens = issuer.tokens()
    assert (await tokens.valid()).token == "t1"
    issuer.now = 79.9
    assert (await tokens.valid()).token == "t1"
    issuer.now = 80.0
    assert (await tokens.valid()).token == "t2"


async def test_callers_asking_together_get_one_fetch() -> None:
    issuer = Issuer()
    tokens = issuer.tokens()
    got = await asyncio.gather(*(tokens.valid() for _ in range(5)))
    assert {credential.token for credential in got} == {"t1"}
    assert issuer.issued == 1
    assert (await tokens.fresh()).token == "t2"  # a connection always gets a new one


async def test_a_refused_token_is_forgotten_and_another_one_is_not() -> None:
    issuer = Issuer()
    tokens = issuer.tokens()
    await tokens.valid()
    tokens.invalidate("t0")  # not the current one: kept
    assert (await tokens.valid()).token == "t1"
    tokens.invalidate("t1")
    assert tokens.current is None
    assert (await tokens.valid()).token == "t2"


async def test_a_refused_installation_is_a_revocation() -> None:
    issuer = Issuer()
    issuer.refuse = True
    with pytest.raises(InstallationRevokedError) as revoked:
        await issuer.tokens().valid()
    assert revoked.value.status == 401


def test_long_lifetimes_renew_within_the_margin_and_bad_ones_are_refused() -> None:
    credential = credential_from(Issued("t", 86_400.0), 1000.0)
    assert credential.expires_at == 1000.0 + 86_400.0
    assert credential.expires_at - credential.renew_at == MAX_RENEW_MARGIN
    for lifetime in (math.inf, math.nan, 0.5):
        with pytest.raises(PacerelleError):
            credential_from(Issued("t", lifetime), 0.0)
