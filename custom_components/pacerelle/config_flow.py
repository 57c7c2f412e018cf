"""Config flow for Pacerelle: Agent Connect in the Home Assistant UI.

The user pastes a one-time connection key; the flow registers (or reuses) an OAuth client,
starts the installation with PKCE S256 and a state bound to this flow, and sends the browser
to Pacerelle's approval page; Home Assistant's OAuth2 callback (oauth_callback.py) resumes
it. The state is checked before anything else; the installation token is kept in the agent's
encrypted store, never in the entry. The unique id is the owner's account: one agent per
account, and a reauth from another account aborts with wrong_account (the device and
entities are keyed on the entry, so a reauth keeps them). Before the browser leaves, errors
are form errors; after, the key is spent and the flow aborts with the reason. Agent Connect
offers no revoke, so an already_configured or wrong_account abort names the agent the user
must revoke in Pacerelle. Nothing is left behind by an abort (the store is created last).
"""

import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, override

import aiohttp
import probatio
from homeassistant.config_entries import (
    SOURCE_REAUTH,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
)
from homeassistant.core import callback
from homeassistant.data_entry_flow import AbortFlow, section
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)

from .client import (
    BOUNDS,
    AgentConnect,
    ErrorKind,
    Installation,
    PacerelleApiError,
    PacerelleError,
    install_agent,
)
from .client_registry import client_registry
from .const import (
    CONF_AGENT_DESCRIPTION,
    CONF_AGENT_ID,
    CONF_AGENT_NAME,
    CONF_CONNECTION_KEY,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DEFAULT_AGENT_DESCRIPTION,
    DEFAULT_AGENT_NAME,
    DOMAIN,
    ENTRY_MINOR_VERSION,
    ENTRY_VERSION,
    default_server_url,
)
from .errors import connect_begin_error, connect_exchange_error
from .issues.markdown import markdown_text
from .limits import MAX_ERROR_PLACEHOLDER
from .oauth_callback import CallbackState, redirect_uri
from .options_flow import PacerelleOptionsFlow
from .owner_conversation import async_follow_owner_conversation, owner_subentry_data
from .runtime import PacerelleConfigEntry
from .server_url import InsecureServerUrlError, checked_server_url
from .store.agent_store import agent_store
from .subentry_flow import SUBENTRY_FLOWS

_LOGGER = logging.getLogger(__name__)

SECTION_ADVANCED = "advanced"
ACCESS_DENIED = "access_denied"

CONNECTION_KEY_SELECTOR = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
USER_SCHEMA = probatio.Schema(
    {
        probatio.Required(CONF_CONNECTION_KEY): CONNECTION_KEY_SELECTOR,
        probatio.Required(CONF_AGENT_NAME, default=DEFAULT_AGENT_NAME): str,
        probatio.Required(CONF_AGENT_DESCRIPTION, default=DEFAULT_AGENT_DESCRIPTION): TextSelector(
            TextSelectorConfig(multiline=True)
        ),
        # Only developers change the server (to the emulator): folded away by default. A
        # section, because Home Assistant 2026.10 deprecates show_advanced_options for this
        # (it now always answers True).
        probatio.Required(SECTION_ADVANCED): section(
            probatio.Schema(
                {probatio.Required(CONF_SERVER_URL, default=default_server_url): TextSelector()}
            ),
            {"collapsed": True},
        ),
    }
)
REAUTH_SCHEMA = probatio.Schema({probatio.Required(CONF_CONNECTION_KEY): CONNECTION_KEY_SELECTOR})


@dataclass(frozen=True)
class _Authorization:
    """What the flow keeps between sending the browser away and its return."""

    state: CallbackState
    request: AgentConnect  # its client id, callback URL and PKCE verifier
    deadline: float  # time.monotonic() after which Pacerelle refuses the code


class PacerelleConfigFlow(ConfigFlow, domain=DOMAIN):
    """Connect Home Assistant to Pacerelle as an agent."""

    VERSION = ENTRY_VERSION
    MINOR_VERSION = ENTRY_MINOR_VERSION

    def __init__(self) -> None:
        self._server_url = default_server_url()
        self._agent_name = DEFAULT_AGENT_NAME
        self._agent_description = DEFAULT_AGENT_DESCRIPTION
        self._authorization: _Authorization | None = None
        self._callback: dict[str, Any] = {}

    @staticmethod
    @callback
    @override
    def async_get_options_flow(config_entry: PacerelleConfigEntry) -> PacerelleOptionsFlow:
        return PacerelleOptionsFlow()

    @classmethod
    @callback
    @override
    def async_get_supported_subentry_types(
        cls, config_entry: PacerelleConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """Named conversations (subentry_flow.py)."""
        return SUBENTRY_FLOWS

    @override
    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for the connection key created in Pacerelle, then start Agent Connect."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors = self._read_user_input(user_input)
            if not errors:
                result = await self._async_begin(user_input[CONF_CONNECTION_KEY], errors)
                if result is not None:
                    return result
        # The key is never sent back to the frontend, even on error.
        shown = {name: value for name, value in (user_input or {}).items() if name in _ECHOED}
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(USER_SCHEMA, shown),
            errors=errors,
        )

    def _read_user_input(self, user_input: dict[str, Any]) -> dict[str, str]:
        name = user_input[CONF_AGENT_NAME].strip()
        description = user_input[CONF_AGENT_DESCRIPTION].strip()
        server_url = user_input.get(SECTION_ADVANCED, {}).get(CONF_SERVER_URL, default_server_url())
        if not name or len(name) > BOUNDS.agent_name:
            return {CONF_AGENT_NAME: "invalid_agent_name"}
        if len(description) > BOUNDS.agent_description:
            return {CONF_AGENT_DESCRIPTION: "invalid_agent_description"}
        try:
            self._server_url = checked_server_url(server_url)
        except InsecureServerUrlError:
            return {"base": "insecure_server_url"}
        except ValueError:
            return {"base": "invalid_server_url"}
        self._agent_name, self._agent_description = name, description
        return {}

    async def async_step_reauth(self, entry_data: Mapping[str, Any]) -> ConfigFlowResult:
        """The installation was revoked: a new one is needed (a new agent identity)."""
        self._server_url = entry_data[CONF_SERVER_URL]
        self._agent_name = entry_data.get(CONF_AGENT_NAME, DEFAULT_AGENT_NAME)
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for a new connection key, explaining that the agent's identity changes."""
        errors: dict[str, str] = {}
        if user_input is not None:
            result = await self._async_begin(user_input[CONF_CONNECTION_KEY], errors)
            if result is not None:
                return result
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=REAUTH_SCHEMA,
            errors=errors,
        )

    async def _async_begin(
        self, connection_key: str, errors: dict[str, str]
    ) -> ConfigFlowResult | None:
        """Start the installation: the external step, an abort, or None with `errors` set."""
        callback_url = redirect_uri(self.hass)
        if callback_url is None:
            return self.async_abort(reason="no_redirect_uri")
        session = async_get_clientsession(self.hass)
        registry = client_registry(self.hass)
        state = CallbackState(self.flow_id, callback_url)
        try:
            client_id, known = await registry.async_client_id(
                session, self._server_url, callback_url
            )
            try:
                request = await self._async_request(session, connection_key, client_id, state)
            except PacerelleApiError as err:
                # A server that forgot our client (reset, migrated) refuses it without
                # spending the key: register again once.
                if not known or err.kind is ErrorKind.AUTH_REFUSED or err.status >= 500:
                    raise
                await registry.async_forget(self._server_url, callback_url, client_id)
                client_id, _ = await registry.async_client_id(
                    session, self._server_url, callback_url
                )
                request = await self._async_request(session, connection_key, client_id, state)
        except PacerelleError as err:
            _LOGGER.debug("Pacerelle did not start the installation: %s", err)
            errors["base"] = connect_begin_error(err)
            return None
        deadline = time.monotonic() + request.expires_in
        self._authorization = _Authorization(state, request, deadline)
        return self.async_external_step(step_id="authorize", url=request.authorization_url)

    async def _async_request(
        self,
        session: aiohttp.ClientSession,
        connection_key: str,
        client_id: str,
        state: CallbackState,
    ) -> AgentConnect:
        return await AgentConnect.begin(
            session,
            self._server_url,
            connection_key=connection_key,
            client_id=client_id,
            redirect_uri=state.redirect_uri,
            state=await state.async_encode(self.hass),
            agent_name=self._agent_name,
            agent_description=self._agent_description,
        )

    async def async_step_authorize(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The browser is in Pacerelle; the callback view resumes here with its query."""
        # Only _async_begin leads here, and it always sets the authorization first.
        assert self._authorization is not None
        if user_input is None:
            # The frontend asked for the current step again: the same page.
            url = self._authorization.request.authorization_url
            return self.async_external_step(step_id="authorize", url=url)
        # Recorded as is: nothing of it is trusted before the state is checked.
        self._callback = dict(user_input)
        return self.async_external_step_done(next_step_id="finish")

    async def async_step_finish(self, user_input: None = None) -> ConfigFlowResult:
        """Check the state, exchange the code, keep the installation, create or update."""
        # Every refusal below raises AbortFlow, which ends the flow with its reason.
        installation = await self._async_exchange()
        if self.source == SOURCE_REAUTH:
            return await self._async_replace_installation(installation)
        return await self._async_create_installation(installation)

    async def _async_exchange(self) -> Installation:
        authorization = self._authorization
        if authorization is None or not authorization.state.matches(self._callback.get("state")):
            raise AbortFlow("state_mismatch")
        error = self._callback.get("error")
        if error == ACCESS_DENIED:
            raise AbortFlow(ACCESS_DENIED)
        code = self._callback.get("code")
        if error is not None or not isinstance(code, str) or not code:
            raise AbortFlow(
                "authorization_failed", {"error": str(error or "no code")[:MAX_ERROR_PLACEHOLDER]}
            )
        if time.monotonic() >= authorization.deadline:
            raise AbortFlow("authorization_expired")
        try:
            return await authorization.request.exchange(async_get_clientsession(self.hass), code)
        except PacerelleError as err:
            _LOGGER.warning("Pacerelle did not complete the installation: %s", err)
            raise AbortFlow(connect_exchange_error(err)) from err

    async def _async_create_installation(self, installation: Installation) -> ConfigFlowResult:
        await self.async_set_unique_id(installation.owner_id)
        configured = self.hass.config_entries.async_entry_for_domain_unique_id(
            DOMAIN, installation.owner_id
        )
        if configured is not None:
            raise self._agent_left_behind(
                "already_configured",
                installation,
                configured_agent_name=configured.title,
                configured_agent_id=str(configured.data.get(CONF_AGENT_ID, "")),
            )
        await self._async_create_store(installation)
        owner = owner_subentry_data(installation.conversation_id)
        return self.async_create_entry(
            title=self._agent_name, data=self._entry_data(installation), subentries=[owner]
        )

    async def _async_replace_installation(self, installation: Installation) -> ConfigFlowResult:
        """A new agent replaces the revoked one in the same entry: same device, same entities.

        The store is keyed by agent id (its file name): the new agent gets a new store and
        the old one is deleted, so nothing of the revoked identity stays behind. The
        account is compared with the entry's data rather than its unique id, which an
        entry migrated beside another of the same account keeps (migration.py).
        """
        entry = self._get_reauth_entry()
        if installation.owner_id != entry.data[CONF_OWNER_ID]:
            raise self._agent_left_behind(
                "wrong_account", installation, account_id=installation.owner_id
            )
        # The old runtime must let go of its store before the store goes away. An entry Home
        # Assistant cannot unload (a failed migration) cannot be reloaded either.
        recoverable = entry.state.recoverable
        if recoverable:
            await self.hass.config_entries.async_unload(entry.entry_id)
        try:
            # Pacerelle makes a new agent for every approval: a store for its id that
            # exists already is never overwritten (store_failed).
            await self._async_create_store(installation)
        except AbortFlow:
            self.hass.config_entries.async_schedule_reload(entry.entry_id)
            raise
        await agent_store(self.hass, entry.data[CONF_AGENT_ID]).remove()
        async_follow_owner_conversation(self.hass, entry, installation.conversation_id)
        if not recoverable:
            return self.async_update_and_abort(
                entry, data=self._entry_data(installation), reason="reauth_successful"
            )
        return self.async_update_reload_and_abort(
            entry, data=self._entry_data(installation), reason="reauth_successful"
        )

    def _agent_left_behind(
        self, reason: str, installation: Installation, **placeholders: str
    ) -> AbortFlow:
        """The abort for an agent Pacerelle created that Home Assistant will not run: it
        names the agent, which only the user can revoke (Agent Connect has no call for it)."""
        _LOGGER.warning(
            "Pacerelle created agent %s (%s) in account %s, which is not used here (%s): "
            "revoke it in Pacerelle, Settings → Security → Agent Connect",
            installation.agent_id,
            self._agent_name,
            installation.owner_id,
            reason,
        )
        shown = {"agent_name": self._agent_name, "agent_id": installation.agent_id}
        shown |= placeholders
        return AbortFlow(
            reason,
            {name: markdown_text(value[:MAX_ERROR_PLACEHOLDER]) for name, value in shown.items()},
        )

    async def _async_create_store(self, installation: Installation) -> None:
        """The installation token's only home: the agent's encrypted store."""
        store = agent_store(self.hass, installation.agent_id)
        try:
            await install_agent(store, installation, self._server_url)
        except FileExistsError as err:
            # Another store for this agent id holds an identity: never overwrite it.
            _LOGGER.exception("A store for agent %s exists already", installation.agent_id)
            raise AbortFlow("store_failed") from err
        except OSError as err:
            _LOGGER.exception("Cannot create the store of agent %s", installation.agent_id)
            # Best effort: a disk that refused the write may refuse the cleanup too.
            with contextlib.suppress(OSError):
                await store.remove()
            raise AbortFlow("store_failed") from err

    def _entry_data(self, installation: Installation) -> dict[str, str]:
        return {
            CONF_AGENT_ID: installation.agent_id,
            CONF_OWNER_ID: installation.owner_id,
            CONF_CONVERSATION_ID: installation.conversation_id,
            CONF_SERVER_URL: self._server_url,
            CONF_AGENT_NAME: self._agent_name,
        }


# Fields of the user step shown again after an error (never the connection key).
_ECHOED = frozenset({CONF_AGENT_NAME, CONF_AGENT_DESCRIPTION, SECTION_ADVANCED})
