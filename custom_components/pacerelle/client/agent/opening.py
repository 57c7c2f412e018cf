"""One way to open an agent, one way to install one: the host never reads the store's document.

`open_agent` loads the agent's store, reads its own installation token, tells a store put back
from an older copy by the host's witness (agent/generation.py), decides the trust book and the
identity it starts with (trust/kept.py, agent/identity.py; committed before anything can fail
after), advances the generation, requests the first runtime token and returns the agent, ready
to start. The host is told of the start (`Opening`) before the token is requested, so that a
start that fails there still shows the restore or the trust loss it found. `install_agent`
creates the store of a new installation: the installation token's only home.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import aiohttp

from ..agent_core import AgentConfig, AgentHooks
from ..relay.agent_connect import Installation, request_runtime_token
from ..relay.tokens import IssuedToken, RuntimeTokens
from ..state.agent_store import AgentStore
from ..state.errors import StoreError, StoreProblem
from ..trust.door import TrustDoor, TrustListener
from ..trust.kept import TrustLoss, kept_outside, starting_book
from ..values.agent_data import SECTIONS, AgentData, AgentDataError
from ..values.trust_book import DeviceTrust
from .agent import Agent
from .generation import GenerationWitness, advance, advance_at_stop, behind
from .identity import starting_data

INSTALLATION: Final = "installation"  # an integration key of the agent's store


class EarlierTrust(Protocol):
    """Where hosts of earlier versions kept the trust book (read once, then removed)."""

    async def load(self) -> Mapping[str, Any] | None: ...

    async def remove(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Opening:
    """What the start found: a store put back from an older copy (`restored`), and trust
    decisions that may be older than those made since (`trust_loss`), with the devices it
    made unverified (`reset`: each needs a decision again)."""

    restored: bool
    trust_loss: TrustLoss | None
    reset: tuple[DeviceTrust, ...]


@dataclass(frozen=True, slots=True)
class AgentHost:
    """What the agent needs of its host: the HTTP session, the hooks, the witness of its
    store's generation, the trust book of earlier versions, who hears of each trust change
    (before the message that revealed it acts), and who is told of the start."""

    session: aiohttp.ClientSession
    hooks: AgentHooks
    witness: GenerationWitness
    earlier_trust: EarlierTrust
    trust_changed: TrustListener
    opened: Callable[[Opening], None]


async def open_agent(store: AgentStore, config: AgentConfig, host: AgentHost) -> Agent:
    """The agent of `store`, ready to start. StoreError: the store cannot be read (nothing is
    ever made anew for it); PacerelleError: the first runtime token was refused or Pacerelle
    is unreachable (the start decided and committed, nothing published)."""
    keys, stored = await _load(store)
    token = _installation_token(keys)
    restored = behind(keys, await host.witness.last())
    legacy = await host.earlier_trust.load() if kept_outside(stored) else None
    start = starting_book(stored, restored=restored, owner_id=config.owner_id, legacy=legacy)
    host.opened(Opening(restored, start.loss, start.reset))
    data = await starting_data(
        stored, restored=restored, hooks=host.hooks, store=store, extra=keys, book=start.book
    )
    keys = await advance(store, host.witness, keys)
    tokens = await _first_token(host.session, config.server_url, token)
    await host.earlier_trust.remove()  # the store holds the book now
    door = TrustDoor(config.owner_id, start.book, changed=host.trust_changed)

    async def at_close() -> None:
        await advance_at_stop(store, host.witness, keys)
        await store.close()

    return Agent(
        host.session, config, host.hooks, tokens, data, keys, door, store=store, at_close=at_close
    )


async def install_agent(store: AgentStore, installation: Installation, server_url: str) -> None:
    """Create the store of a new installation, its token inside. FileExistsError: a store for
    this agent exists already (never overwritten); OSError: the disk refused (nothing left)."""
    await store.create(
        {
            INSTALLATION: {
                "token": installation.installation_token,
                "agent_id": installation.agent_id,
                "owner_id": installation.owner_id,
                "conversation_id": installation.conversation_id,
                "server_url": server_url,
            }
        }
    )


async def _load(store: AgentStore) -> tuple[dict[str, Any], AgentData | None]:
    """The store's integration keys and the agent's data (none: never had an identity)."""
    try:
        document, data = await store.load_data()
    except AgentDataError as err:
        raise StoreError(StoreProblem.CORRUPT, str(err)) from err
    return {key: value for key, value in document.items() if key not in SECTIONS}, data


def _installation_token(keys: Mapping[str, Any]) -> str:
    installation = keys.get(INSTALLATION)
    token = installation.get("token") if isinstance(installation, dict) else None
    if not isinstance(token, str):
        raise StoreError(StoreProblem.CORRUPT, "no installation in the store")
    return token


async def _first_token(
    session: aiohttp.ClientSession, server_url: str, installation_token: str
) -> RuntimeTokens:
    async def fetch() -> IssuedToken:
        return await request_runtime_token(session, server_url, installation_token)

    tokens = RuntimeTokens(fetch)
    await tokens.fresh()
    return tokens
