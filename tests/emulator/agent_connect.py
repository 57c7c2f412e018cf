"""Agent Connect: client registration, connection keys, authorization, tokens."""

import base64
import hashlib
import re
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiohttp import web

from .context import Emulator, emulator_of
from .http_util import (
    ApiError,
    bearer_token,
    new_id,
    new_secret,
    read_json_object,
    require_str,
)
from .state import AuthRequest, Installation, Json, OAuthClient, RuntimeToken

SCOPE = "myagents:agent-connect"
MAX_AGENT_NAME = 100
MAX_AGENT_DESCRIPTION = 1000
# RFC 7636: 43 to 128 characters from the unreserved set.
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(int(timestamp), UTC).isoformat().replace("+00:00", "Z")


def base_url(request: web.Request) -> str:
    public = emulator_of(request).config.public_url
    return public.rstrip("/") if public else f"{request.scheme}://{request.host}"


def _check_redirect_uri(uri: object) -> str:
    if not isinstance(uri, str):
        raise ApiError(400, "every redirect URI must be a string")
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
        raise ApiError(400, f"redirect URI {uri!r} must be absolute http(s) without fragment")
    return uri


async def register_client(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    body = await read_json_object(request)
    name = require_str(body, "client_name")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise ApiError(400, "`redirect_uris` must be a non-empty list")
    client = OAuthClient(new_id("cli"), name, [_check_redirect_uri(uri) for uri in uris])
    emulator.state.clients[client.client_id] = client
    emulator.commit()
    emulator.record("client_registered", client_id=client.client_id)
    return web.json_response(
        {
            **client.to_json(),
            "client_id_issued_at": int(emulator.now()),
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
        },
        status=201,
    )


def _validated_request_fields(emulator: Emulator, body: Json) -> Json:
    client = emulator.state.clients.get(require_str(body, "client_id"))
    if client is None:
        raise ApiError(400, "unknown client_id")
    redirect_uri = require_str(body, "redirect_uri")
    if redirect_uri not in client.redirect_uris:
        raise ApiError(400, "redirect_uri is not registered for this client")
    if body.get("code_challenge_method") != "S256":
        raise ApiError(400, "code_challenge_method must be S256")
    challenge = require_str(body, "code_challenge")
    if not _CHALLENGE.fullmatch(challenge):
        raise ApiError(400, "code_challenge must be a URL-safe base64 SHA-256 digest")
    if body.get("scope") != SCOPE:
        raise ApiError(400, f"scope must be {SCOPE}")
    name = require_str(body, "agent_name")
    description = body.get("agent_description", "")
    if not isinstance(description, str):
        raise ApiError(400, "`agent_description` must be a string")
    if len(name) > MAX_AGENT_NAME or len(description) > MAX_AGENT_DESCRIPTION:
        raise ApiError(400, "agent name or description too long")
    return {
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": require_str(body, "state"),
        "code_challenge": challenge,
        "agent_name": name,
        "agent_description": description,
    }


async def create_request(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    key = emulator.state.connect_keys.get(bearer_token(request) or "")
    if key is None or key.used_at is not None:
        raise ApiError(401, "the connection key is unknown or already used")
    fields = _validated_request_fields(emulator, await read_json_object(request))
    now = emulator.now()
    ttl = emulator.config.auth_request_ttl
    auth = AuthRequest(
        request_id=new_id("req"),
        user_id=key.user_id,
        created_at=now,
        expires_at=now + ttl,
        **fields,
    )
    key.used_at = now
    emulator.state.requests[auth.request_id] = auth
    emulator.commit()
    emulator.record("request_created", request_id=auth.request_id, user_id=key.user_id)
    query = urlencode({"request_id": auth.request_id})
    url = f"{base_url(request)}/agent-connect/authorize?{query}"
    return web.json_response(
        {
            "request_id": auth.request_id,
            "authorization_url": url,
            "expires_at": iso_time(auth.expires_at),
            "expires_in": int(ttl),
        }
    )


def pending_request(emulator: Emulator, request_id: str) -> AuthRequest:
    """The request a user may still answer, or the refusal the user would see."""
    auth = emulator.state.requests.get(request_id)
    if auth is None:
        raise ApiError(404, "unknown authorization request")
    if auth.status != "pending":
        raise ApiError(409, f"this authorization request was already {auth.status}")
    if emulator.now() >= auth.expires_at:
        raise ApiError(410, "this authorization request has expired")
    return auth


def _with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


def decide(emulator: Emulator, request_id: str, *, approve: bool) -> str:
    """Approve or deny as the user would, and return where the browser goes next."""
    auth = pending_request(emulator, request_id)
    if not approve:
        auth.status = "denied"
        emulator.commit()
        emulator.record("request_denied", request_id=request_id)
        return _with_query(auth.redirect_uri, {"error": "access_denied", "state": auth.state})
    # Approval creates the agent and its direct conversation, as Pacerelle does.
    installation = Installation(
        agent_id=new_id("agt"),
        owner_id=auth.user_id,
        conversation_id=new_id("conv"),
        agent_name=auth.agent_name,
        agent_description=auth.agent_description,
        client_id=auth.client_id,
        installation_token=new_secret("pit"),
        created_at=emulator.now(),
    )
    emulator.state.installations[installation.agent_id] = installation
    emulator.state.conversation_log(installation.conversation_id)
    auth.status = "approved"
    auth.code = new_secret("code")
    auth.agent_id = installation.agent_id
    emulator.commit()
    emulator.record("request_approved", request_id=request_id, agent_id=installation.agent_id)
    return _with_query(auth.redirect_uri, {"code": auth.code, "state": auth.state})


def _pkce_matches(verifier: str, challenge: str) -> bool:
    if not _VERIFIER.fullmatch(verifier):
        return False
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=") == challenge


async def exchange_code(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    if request.content_type != "application/x-www-form-urlencoded":
        raise ApiError(400, "the token request must be form-encoded")
    form = await request.post()
    values = {name: str(form.get(name, "")) for name in form}
    if values.get("grant_type") != "authorization_code":
        raise ApiError(400, "unsupported_grant_type: only authorization_code is accepted")
    auth = emulator.state.request_by_code(values.get("code", ""))
    if auth is None or not values.get("code"):
        raise ApiError(400, "invalid_grant: unknown code")
    if auth.status == "exchanged":
        raise ApiError(400, "invalid_grant: the code was already used")
    if emulator.now() >= auth.expires_at:
        raise ApiError(400, "invalid_grant: the authorization has expired")
    if values.get("client_id") != auth.client_id:
        raise ApiError(400, "invalid_grant: client_id does not match the request")
    if values.get("redirect_uri") != auth.redirect_uri:
        raise ApiError(400, "invalid_grant: redirect_uri does not match the request")
    if not _pkce_matches(values.get("code_verifier", ""), auth.code_challenge):
        raise ApiError(400, "invalid_grant: code_verifier does not match the code challenge")
    installation = emulator.state.installations[auth.agent_id or ""]
    if installation.revoked:
        raise ApiError(400, "invalid_grant: the installation was revoked")
    auth.status = "exchanged"
    emulator.commit()
    emulator.record("code_exchanged", agent_id=installation.agent_id)
    return web.json_response(
        {
            "installation_token": installation.installation_token,
            "token_type": "Bearer",
            "agent_id": installation.agent_id,
            "owner_id": installation.owner_id,
            "conversation_id": installation.conversation_id,
            "scope": SCOPE,
        }
    )


async def issue_runtime_token(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    forced = emulator.faults.runtime_token_status
    if forced is not None:
        raise ApiError(forced, f"fault injected: runtime token status {forced}")
    installation = emulator.state.installation_by_token(bearer_token(request) or "")
    if installation is None:
        raise ApiError(401, "unknown installation token")
    if installation.revoked:
        raise ApiError(403, "the installation was revoked")
    now = emulator.now()
    ttl = emulator.config.runtime_token_ttl
    tokens = emulator.state.runtime_tokens
    for stale in [key for key, item in tokens.items() if item.expires_at <= now]:
        del tokens[stale]
    token = RuntimeToken(new_secret("pat"), installation.agent_id, now + ttl)
    tokens[token.token] = token
    emulator.commit()
    emulator.record("runtime_token_issued", agent_id=installation.agent_id)
    return web.json_response(
        {
            "agent_id": installation.agent_id,
            "owner_id": installation.owner_id,
            "conversation_id": installation.conversation_id,
            "agent_token": token.token,
            "expires_in": int(ttl),
        }
    )


def routes() -> list[web.AbstractRouteDef]:
    return [
        web.post("/oauth/register", register_client),
        web.post("/agent-connect/requests", create_request),
        web.post("/agent-connect/token", exchange_code),
        web.post("/agent-connect/runtime-token", issue_runtime_token),
    ]
