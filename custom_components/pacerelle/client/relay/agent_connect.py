"""Agent Connect: how an app becomes a Pacerelle agent with the user's approval.

The app registers an OAuth client once per server and callback URL, starts an installation
with the one-time connection key the user pasted (PKCE S256 and a state of its choosing),
sends the browser to `authorization_url`, exchanges the returned code for a long-lived
installation token, then trades that token for 15-minute runtime tokens. The installation
token is the agent's lasting credential: the dataclasses here keep it out of `repr`.
"""

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp

from ..errors import PacerelleResponseError
from . import answers
from .http import request_json

SCOPE = "myagents:agent-connect"
CODE_CHALLENGE_METHOD = "S256"
PKCE_VERIFIER_BYTES = 64
# Pacerelle's web-facing limits (names and descriptions it accepts).

REGISTER_PATH = "/oauth/register"
REQUESTS_PATH = "/agent-connect/requests"
EXCHANGE_PATH = "/agent-connect/token"
RUNTIME_PATH = "/agent-connect/runtime-token"


@dataclass(frozen=True)
class Pkce:
    """A PKCE pair: the verifier stays with us, the challenge goes to Pacerelle."""

    verifier: str = field(repr=False)
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(PKCE_VERIFIER_BYTES)
        return cls(verifier, code_challenge(verifier))


def code_challenge(verifier: str) -> str:
    """S256: URL-safe base64 of SHA-256(verifier), without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


@dataclass(frozen=True)
class Installation:
    """What the code exchange returns: the agent and its long-lived credential."""

    agent_id: str
    owner_id: str
    conversation_id: str
    installation_token: str = field(repr=False)


@dataclass(frozen=True)
class RuntimeToken:
    """A short-lived agent token for the gateway and the agent API."""

    agent_id: str
    owner_id: str
    conversation_id: str
    agent_token: str = field(repr=False)
    expires_in: int


@dataclass(frozen=True)
class AgentConnect:
    """One installation waiting for the user's answer in Pacerelle: `begin` starts it,
    the browser goes to `authorization_url`, `exchange` trades the callback's code for the
    `Installation` (before `expires_in` seconds have passed)."""

    server_url: str
    client_id: str
    redirect_uri: str
    request_id: str
    authorization_url: str
    expires_in: int
    expires_at: str
    pkce: Pkce

    @staticmethod
    async def register(
        session: aiohttp.ClientSession, server_url: str, *, client_name: str, redirect_uri: str
    ) -> str:
        """Register an OAuth client for one callback URL; its client_id (not a secret)."""
        body = await request_json(
            session,
            "POST",
            _url(server_url, REGISTER_PATH),
            json_body={"client_name": client_name, "redirect_uris": [redirect_uri]},
        )
        return answers.identifier(body, "client_id")

    @classmethod
    async def begin(
        cls,
        session: aiohttp.ClientSession,
        server_url: str,
        *,
        connection_key: str,
        client_id: str,
        redirect_uri: str,
        state: str,
        agent_name: str,
        agent_description: str,
    ) -> AgentConnect:
        """Start an installation with the user's connection key (spent by a success).

        PacerelleAuthError: the key is unknown or already used.
        """
        pkce = Pkce.new()
        body = await request_json(
            session,
            "POST",
            _url(server_url, REQUESTS_PATH),
            token=connection_key,
            json_body={
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "code_challenge": pkce.challenge,
                "code_challenge_method": CODE_CHALLENGE_METHOD,
                "agent_name": agent_name,
                "agent_description": agent_description,
                "scope": SCOPE,
            },
        )
        authorization_url = answers.text(body, "authorization_url")
        if urlsplit(authorization_url).scheme not in ("http", "https"):
            raise PacerelleResponseError("authorization_url is not an http(s) URL")
        return cls(
            server_url=server_url,
            client_id=client_id,
            redirect_uri=redirect_uri,
            request_id=answers.identifier(body, "request_id"),
            authorization_url=authorization_url,
            expires_in=answers.seconds(body, "expires_in"),
            expires_at=answers.text(body, "expires_at"),
            pkce=pkce,
        )

    async def exchange(self, session: aiohttp.ClientSession, code: str) -> Installation:
        """Trade the callback's one-time code for the installation (PacerelleApiError if
        refused)."""
        body = await request_json(
            session,
            "POST",
            _url(self.server_url, EXCHANGE_PATH),
            form={
                "grant_type": "authorization_code",
                "client_id": self.client_id,
                "redirect_uri": self.redirect_uri,
                "code": code,
                "code_verifier": self.pkce.verifier,
            },
        )
        return Installation(
            agent_id=answers.identifier(body, "agent_id"),
            owner_id=answers.identifier(body, "owner_id"),
            conversation_id=answers.identifier(body, "conversation_id"),
            installation_token=answers.token(body, "installation_token"),
        )


async def request_runtime_token(
    session: aiohttp.ClientSession, server_url: str, installation_token: str
) -> RuntimeToken:
    """A fresh runtime token; PacerelleAuthError means the installation was revoked.

    Every field is checked (server_answers): a hostile answer is a PacerelleResponseError.
    """
    body = await request_json(
        session, "POST", _url(server_url, RUNTIME_PATH), token=installation_token
    )
    return RuntimeToken(
        agent_id=answers.identifier(body, "agent_id"),
        owner_id=answers.identifier(body, "owner_id"),
        conversation_id=answers.identifier(body, "conversation_id"),
        agent_token=answers.token(body, "agent_token"),
        expires_in=answers.seconds(body, "expires_in"),
    )


def _url(server_url: str, path: str) -> str:
    return server_url.rstrip("/") + path
