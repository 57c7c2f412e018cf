"""The client's host in Home Assistant: one agent's hooks, executor, start and stop.

`async_setup_runtime` opens the agent (client/agent/opening.py: its store loaded and checked
against the witness of its generation, its identity and trust book decided, a first runtime
token; an unreadable store is a repair issue and a ConfigEntryError, never a new identity; a
revoked installation is ConfigEntryAuthFailed, an unreachable Pacerelle ConfigEntryNotReady:
errors.py) and starts it once Home Assistant has started. The agent reaches Home Assistant
only through the hooks built here (`AgentHooks`): every accepted request fires
`pacerelle_message` with the trust judgement the client made when it opened it (events.py).
"""

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError, ConfigEntryNotReady
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.dispatcher import async_dispatcher_send
from homeassistant.helpers.start import async_at_started

from .client import (
    Agent,
    AgentConfig,
    AgentHooks,
    AgentHost,
    DecryptFailures,
    Opening,
    PacerelleError,
    StoreError,
    StoreProblem,
    open_agent,
)
from .const import (
    CONF_AGENT_ID,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DEFAULT_SERVER_URL,
    DOMAIN,
    ENV_PLAINTEXT,
    development_plaintext,
)
from .device import agent_name
from .errors import async_start_reauth, setup_error
from .events import EVENT_MESSAGE_STATUS, MessageEvents, message_status_data
from .issues.decrypt import DecryptionWatch
from .issues.devices import async_watch_devices
from .issues.runtime import clear_store_issue, raise_store_issue, raise_store_restored
from .options import AgentOptions
from .runtime import PacerelleConfigEntry, PacerelleRuntime
from .signals import message_status_signal, status_signal
from .store.agent_store import agent_store
from .store.generation import GenerationFile
from .trust import EarlierTrustFile, TrustManager, TrustNews
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

    async def async_setup(self) -> PacerelleRuntime:
        """Open the agent (the client decides the rest) and arrange its start and stop."""
        hass, entry = self.hass, self.entry
        voice = self._voice_notes()
        # Events (files saved, voice notes transcribed first) in arrival order: see events.py.
        events = MessageEvents(
            hass,
            entry.entry_id,
            self.agent_id,
            self.options.media_folder,
            voice=voice,
        )
        async_keep_messages_unrecorded(hass)
        news = TrustNews(hass, entry.entry_id, self.agent_name)
        host = AgentHost(
            session=async_get_clientsession(hass),
            hooks=self._hooks(events),
            witness=GenerationFile(hass, self.agent_id),
            earlier_trust=EarlierTrustFile(hass, entry.entry_id),
            trust_changed=news.changed,
            opened=partial(self._opened, news),
        )
        agent = await self._async_open(host)
        # The device repairs follow the book from now on (issues/devices.py), starting with
        # the devices the start made unverified.
        trust = TrustManager(agent.trust, news)
        entry.async_on_unload(async_watch_devices(hass, entry.entry_id, self.agent_name, trust))
        news.announce_reset()
        running = RunningAgent(hass, agent, self.agent_id)
        entry.async_on_unload(async_at_started(hass, running.start))
        stop_listener = hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, running.async_stop)

        async def unloaded() -> None:
            if not running.stopping:  # the stop event has not come (it removes itself)
                stop_listener()
            await running.async_stop()

        entry.async_on_unload(unloaded)
        return PacerelleRuntime(
            agent, entry.entry_id, trust=trust, voice=voice, decryption_failures=self.failures
        )

    # What set-up is made of

    async def _async_open(self, host: AgentHost) -> Agent:
        """The opened agent, or what set-up fails with: an unreadable store is a repair issue
        and a ConfigEntryError (never a new identity), one held by another process is retried;
        a refused or unreachable Pacerelle fails as errors.py says."""
        hass, entry = self.hass, self.entry
        try:
            return await open_agent(self.store, self._config(), host)
        except StoreError as err:
            problem = err.problem
            path = hass.config.path(".storage", DOMAIN)
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
        except PacerelleError as err:
            raise setup_error(err) from err

    @callback
    def _opened(self, news: TrustNews, opening: Opening) -> None:
        """What the start found, told before anything else can fail: a store put back from
        an older copy, trust decisions that may be older than those made since."""
        clear_store_issue(self.hass, self.entry.entry_id)  # the store was read
        if opening.restored:
            _LOGGER.warning("The store of agent %s is an older copy (restored)", self.agent_name)
            raise_store_restored(self.hass, self.entry.entry_id, self.agent_name)
        news.opened(opening)

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
        encrypted = not development_plaintext()
        if not encrypted:
            _LOGGER.warning(
                "Agent %s runs WITHOUT end-to-end encryption (%s is set: development only)",
                self.agent_id,
                ENV_PLAINTEXT,
            )
        return AgentConfig(
            agent_id=self.agent_id,
            owner_id=self.owner_id,
            conversation_id=str(self.entry.data[CONF_CONVERSATION_ID]),
            server_url=self.server_url,
            encrypted=encrypted,
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


class RunningAgent:
    """The opened agent's start and stop in Home Assistant."""

    def __init__(self, hass: HomeAssistant, agent: Agent, agent_id: str) -> None:
        self._hass = hass
        self._agent = agent
        self._agent_id = agent_id
        self._stopping: asyncio.Future[None] | None = None

    @property
    def stopping(self) -> bool:
        return self._stopping is not None

    @callback
    def start(self, _hass: HomeAssistant) -> None:
        """Connect once Home Assistant has started (at once on a reload).

        Automations arm their triggers only once Home Assistant has started: messages taken
        from the relay before then would fire events that nothing listens to. The relay
        keeps them until the agent connects.
        """
        self._agent.start()

    async def async_stop(self, _event: Event | None = None) -> None:
        """Stop the agent, advance the generation, close the store (its lock released: the
        next start reads the disk, a folder put back). Once: Home Assistant's stop and the
        entry's unload may come together, and the second waits for the first."""
        if self._stopping is None:
            self._stopping = self._hass.async_create_task(
                self._agent.close(), f"pacerelle stop {self._agent_id}", eager_start=True
            )
        await asyncio.shield(self._stopping)


__all__ = ["AgentCoordinator", "RunningAgent", "async_setup_runtime"]
