"""The client's host in Home Assistant: one agent's store, executor, listeners, start and stop.

`async_setup_runtime` loads the encrypted store (an unreadable one is a repair issue and a
ConfigEntryError, never a new identity), checks it against the witness of its generation
(store/generation.py), lets the client decide the identity it starts with (new, kept or
re-keyed: client/agent/identity.py), advances the generation, requests the first runtime token
(refused: the installation was revoked -> ConfigEntryAuthFailed; unreachable ->
ConfigEntryNotReady; both from errors.py), and starts the HA-free Agent once Home
Assistant has started. The Agent reaches Home Assistant only through the
hooks built here (`AgentHooks`): every accepted request fires `pacerelle_message` with the
trust judgement the client made when it opened it (events.py, client/trust/door.py).
"""

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError, ConfigEntryNotReady
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.dispatcher import async_dispatcher_send
from homeassistant.helpers.start import async_at_started

from .client import (
    SECTIONS,
    Agent,
    AgentConfig,
    AgentData,
    AgentDataError,
    AgentHooks,
    DecryptFailures,
    IssuedToken,
    PacerelleError,
    RuntimeTokens,
    StoreError,
    StoreProblem,
    request_runtime_token,
    starting_data,
)
from .const import (
    CONF_AGENT_ID,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DEFAULT_SERVER_URL,
    DOMAIN,
)
from .device import agent_name
from .errors import async_start_reauth, setup_error
from .events import EVENT_MESSAGE_STATUS, MessageEvents, message_status_data
from .issues.decrypt import DecryptionWatch
from .issues.devices import async_watch_devices
from .issues.runtime import clear_store_issue, raise_store_issue
from .options import AgentOptions
from .runtime import PacerelleConfigEntry, PacerelleRuntime
from .signals import message_status_signal, status_signal
from .store.agent_store import agent_store
from .store.generation import async_advance, async_advance_at_stop, async_found_restored
from .trust import TrustManager
from .voice.privacy import async_keep_messages_unrecorded
from .voice.transcripts import VoiceNotes, VoicePolicy

_LOGGER = logging.getLogger(__name__)


async def async_setup_runtime(hass: HomeAssistant, entry: PacerelleConfigEntry) -> PacerelleRuntime:
    """The entry's running agent (`entry.runtime_data`); raises what set-up should fail with."""
    return await AgentCoordinator(hass, entry).async_setup()


class AgentCoordinator:
    """Hosts one entry's Agent: what it calls (the hooks) and what starts and stops it."""

    def __init__(self, hass: HomeAssistant, entry: PacerelleConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.agent_id = str(entry.data[CONF_AGENT_ID])
        self.agent_name = agent_name(entry)
        self.owner_id = str(entry.data[CONF_OWNER_ID])
        self.server_url = str(entry.data.get(CONF_SERVER_URL) or DEFAULT_SERVER_URL)
        self.options = AgentOptions.from_options(entry.options)
        self.store = agent_store(hass, self.agent_id)
        self.failures = DecryptFailures()
        self._session = async_get_clientsession(hass)
        self._agent: Agent | None = None  # set by async_setup, before anything calls it
        self._stopping: asyncio.Future[None] | None = None

    async def async_setup(self) -> PacerelleRuntime:
        """Load, decide the identity, build the Agent and arrange its start and stop."""
        hass, entry = self.hass, self.entry
        document, stored = await self._async_load()
        # A store behind its witness was put back from an older copy (store/generation.py).
        restored = await async_found_restored(
            hass,
            document,
            agent_id=self.agent_id,
            entry_id=entry.entry_id,
            agent_name=self.agent_name,
        )
        if restored:
            _LOGGER.warning("The store of agent %s is an older copy (restored)", self.agent_name)
        trust = TrustManager(hass, entry.entry_id, self.owner_id, self.agent_name)
        # The trust book to start with: the store's, never more trusting after a restore
        # or a loss, and moved in from the file of earlier versions (trust.py).
        book = await trust.async_starting_book(stored, restored=restored)
        voice = self._voice_notes()
        # Events (files saved, voice notes transcribed first) in arrival order: see events.py.
        events = MessageEvents(
            hass,
            entry.entry_id,
            self.agent_id,
            self.options.media_folder,
            self._download,
            voice=voice,
        )
        async_keep_messages_unrecorded(hass)
        hooks = self._hooks(events)
        # The client decides: a new identity, the stored one, or it re-keyed (identity.py),
        # committed before the witness moves past a restore and before anything can fail.
        data = await starting_data(
            stored,
            restored=restored,
            hooks=hooks,
            store=self.store,
            extra=_extra(document),
            book=book.book,
        )
        document = await async_advance(hass, self.store, document, self.agent_id)
        extra = _extra(document)
        tokens = await self._async_tokens(str(document["installation"]["token"]))
        # The client's trust door, on the book now committed: it judges and seals (trust.py);
        # the device repairs follow the book from then on (issues/devices.py), starting with
        # the devices the start made unverified.
        door = await trust.async_open(book)
        entry.async_on_unload(async_watch_devices(hass, entry.entry_id, self.agent_name, trust))
        trust.announce_reset()
        agent = self._agent = Agent(
            self._session, self._config(), hooks, tokens, data, extra, door, store=self.store
        )
        entry.async_on_unload(async_at_started(hass, self._start))
        stop_listener = hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, self.async_stop)

        async def unloaded() -> None:
            if self._stopping is None:  # the stop event has not come (it removes itself)
                stop_listener()
            await self.async_stop()

        entry.async_on_unload(unloaded)
        return PacerelleRuntime(
            agent, entry.entry_id, trust=trust, voice=voice, decryption_failures=self.failures
        )

    @property
    def agent(self) -> Agent:
        """The hosted Agent: built by `async_setup` before anything here can call it."""
        assert self._agent is not None
        return self._agent

    # What set-up is made of

    async def _async_load(self) -> tuple[dict[str, Any], AgentData | None]:
        """The document and the agent's data (none: a store that never had an identity)."""
        hass, entry = self.hass, self.entry
        path = hass.config.path(".storage", DOMAIN)
        try:
            # Reading and parsing the rows takes milliseconds: in the executor (store/).
            document, data = await self.store.load_data()
            _check_installation(document)
        except (StoreError, AgentDataError) as err:
            problem = err.problem if isinstance(err, StoreError) else StoreProblem.CORRUPT
            # No log line here: Home Assistant logs the ConfigEntryError with its message.
            raise_store_issue(hass, entry.entry_id, self.agent_name, problem, path)
            if problem is StoreProblem.LOCKED:  # held by another process: retried
                raise ConfigEntryNotReady(
                    translation_domain=DOMAIN,
                    translation_key="store_locked",
                    translation_placeholders={"agent_name": self.agent_name},
                ) from err
            raise ConfigEntryError(
                translation_domain=DOMAIN,
                translation_key="store_unreadable",
                translation_placeholders={"agent_name": self.agent_name, "problem": problem.value},
            ) from err
        clear_store_issue(hass, entry.entry_id)
        return document, data

    async def _async_tokens(self, installation_token: str) -> RuntimeTokens:
        """The runtime tokens, with a first one already issued (or set-up fails)."""

        async def fetch() -> IssuedToken:
            return await request_runtime_token(self._session, self.server_url, installation_token)

        tokens = RuntimeTokens(fetch)
        try:
            await tokens.fresh()
        except PacerelleError as err:
            raise setup_error(err) from err
        return tokens

    def _voice_notes(self) -> VoiceNotes:
        options = self.options
        policy = VoicePolicy(
            pipeline_id=options.voice_pipeline,
            owner_id=self.owner_id,
            bridge_on=options.assist_agent is not None,
            every_trusted_device=options.voice_transcripts,
            in_groups=options.assist_in_groups,
        )
        return VoiceNotes(self.hass, policy)

    def _config(self) -> AgentConfig:
        if not self.options.encrypted:
            _LOGGER.warning(
                "Agent %s runs WITHOUT end-to-end encryption (debugging option)", self.agent_id
            )
        return AgentConfig(
            agent_id=self.agent_id,
            owner_id=self.owner_id,
            conversation_id=str(self.entry.data[CONF_CONVERSATION_ID]),
            server_url=self.server_url,
            encrypted=self.options.encrypted,
        )

    def _hooks(self, events: MessageEvents) -> AgentHooks:
        watch = DecryptionWatch(
            self.hass,
            self.entry.entry_id,
            self.agent_id,
            self.agent_name,
            self.failures,
            self.status_changed,
        )
        return AgentHooks(
            run_blocking=self.run_blocking,
            deliver=events.deliver,
            prepare=events.prepare,
            status_changed=self.status_changed,
            revoked=self.revoked,
            send_status=self.send_status,
            decryption=watch.handle,
        )

    # The hooks the Agent calls

    def run_blocking[T](self, function: Callable[[], T]) -> Any:
        """Blocking work (crypto, files) in Home Assistant's executor."""
        return self.hass.async_add_executor_job(function)

    @callback
    def status_changed(self) -> None:
        async_dispatcher_send(self.hass, status_signal(self.entry.entry_id))

    @callback
    def send_status(self, message_id: str, conversation_id: str, status: str) -> None:
        self.hass.bus.async_fire(
            EVENT_MESSAGE_STATUS,
            message_status_data(
                self.entry.entry_id, self.agent_id, message_id, conversation_id, status
            ),
        )
        signal = message_status_signal(self.entry.entry_id)
        async_dispatcher_send(self.hass, signal, message_id, conversation_id, status)

    @callback
    def revoked(self) -> None:
        async_start_reauth(self.hass, self.entry)

    async def _download(self, message_id: str, index: int) -> bytes:
        return await self.agent.download(message_id, index)  # once the agent runs

    # Start and stop

    @callback
    def _start(self, _hass: HomeAssistant) -> None:
        """Connect once Home Assistant has started (at once on a reload).

        Automations arm their triggers only once Home Assistant has started: messages taken
        from the relay before then would fire events that nothing listens to. The relay
        keeps them until the agent connects.
        """
        self.agent.start()

    async def async_stop(self, _event: Event | None = None) -> None:
        """Stop the agent, advance the generation, close the store (its lock released: the
        next start reads the disk, a folder put back). Once: Home Assistant's stop and the
        entry's unload may come together, and the second waits for the first."""
        if self._stopping is None:
            self._stopping = self.hass.async_create_task(
                self._async_stop(), f"pacerelle stop {self.agent_id}", eager_start=True
            )
        await asyncio.shield(self._stopping)

    async def _async_stop(self) -> None:
        await self.agent.stop()
        await async_advance_at_stop(self.hass, self.store, self.agent_id)
        await self.store.close()


def _extra(document: Mapping[str, Any]) -> dict[str, Any]:
    """The integration's keys of the document (the client's sections left out)."""
    return {key: value for key, value in document.items() if key not in SECTIONS}


def _check_installation(document: Mapping[str, Any]) -> None:
    installation = document.get("installation")
    if not isinstance(installation, dict) or not isinstance(installation.get("token"), str):
        raise StoreError(StoreProblem.CORRUPT, "no installation in the store")


__all__ = ["AgentCoordinator", "async_setup_runtime"]
