"""One agent inside Home Assistant: its store, its events, its lifecycle.

`async_setup_runtime` loads the encrypted store (an unreadable one is a repair issue and a
ConfigEntryError, never a new identity), requests the first runtime token (refused: the
installation was revoked -> ConfigEntryAuthFailed; unreachable -> ConfigEntryNotReady; both
from errors.py) and starts the HA-free Agent. Every accepted request fires
`pacerelle_message` with the trust judgement the client made when it opened it
(client/trust/door.py; a blocked key's request is refused there).
"""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError
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
    AgentSignalState,
    AgentStatus,
    AgentStore,
    DecryptFailures,
    DeviceTrust,
    IssuedToken,
    PacerelleError,
    Request,
    RuntimeTokens,
    StoreError,
    StoreProblem,
    rekeyed_after_restore,
    request_runtime_token,
)
from .const import (
    CONF_AGENT_ID,
    CONF_AGENT_NAME,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DEFAULT_SERVER_URL,
    DOMAIN,
)
from .errors import async_start_reauth, setup_error
from .events import (
    EVENT_MESSAGE,
    EVENT_MESSAGE_STATUS,
    MessageEvents,
    event_data,
    message_status_data,
)
from .issues.decrypt import DecryptionWatch
from .issues.runtime import clear_store_issue, raise_store_issue
from .options import AgentOptions
from .repairs import async_watch_trust
from .store.agent_store import agent_store
from .store.generation import async_advance, async_advance_at_stop
from .trust import TrustManager
from .voice.privacy import async_keep_messages_unrecorded
from .voice.transcripts import VoiceNotes, VoicePolicy

_LOGGER = logging.getLogger(__name__)


def judged(request: Request) -> DeviceTrust:
    """A request's one trust judgement (made by the client when it was opened)."""
    return request.judged


SIGNAL_STATUS = f"{DOMAIN}_status_{{}}"


def status_signal(entry_id: str) -> str:
    """Dispatcher signal sent whenever the agent's status may have changed."""
    return SIGNAL_STATUS.format(entry_id)


@dataclass
class PacerelleRuntime:
    """`entry.runtime_data`: the running agent and what the integration builds on it."""

    agent: Agent
    entry_id: str
    trust: TrustManager | None = None
    # Messages that did not decrypt, per person and device (issues/decrypt.py).
    decryption_failures: DecryptFailures = field(default_factory=DecryptFailures)
    # Voice notes' transcripts and problems, for the Assist bridge (voice.py).
    voice: VoiceNotes | None = None

    @property
    def status(self) -> AgentStatus:
        return self.agent.status

    def find_attachment(self, message_id: str, attachment_id: str) -> Mapping[str, Any] | None:
        """An incoming attachment's full descriptor (with its key), to download it."""
        request = self.agent.find_request(message_id)
        if request is None:
            return None
        return next((a for a in request.attachments if a.get("id") == attachment_id), None)


# The typed config entry, defined once next to the runtime data it types.
type PacerelleConfigEntry = ConfigEntry[PacerelleRuntime]


async def async_setup_runtime(hass: HomeAssistant, entry: PacerelleConfigEntry) -> PacerelleRuntime:
    agent_id: str = entry.data[CONF_AGENT_ID]
    agent_name = str(entry.data.get(CONF_AGENT_NAME) or entry.title)
    store = agent_store(hass, agent_id)
    document, data = await _async_load(hass, entry, store, agent_name)
    installation = document["installation"]
    server_url = str(entry.data.get(CONF_SERVER_URL) or DEFAULT_SERVER_URL)
    session = async_get_clientsession(hass)
    installation_token = str(installation["token"])

    async def fetch_token() -> IssuedToken:
        return await request_runtime_token(session, server_url, installation_token)

    tokens = RuntimeTokens(fetch_token)
    try:
        await tokens.fresh()
    except PacerelleError as err:
        raise setup_error(err) from err

    options = AgentOptions.from_options(entry.options)
    agent: Agent | None = None

    async def download(attachment: Mapping[str, Any]) -> bytes:
        assert agent is not None  # files arrive only once the agent runs
        return await agent.download_attachment(attachment)

    trust = TrustManager(hass, entry.entry_id, str(entry.data[CONF_OWNER_ID]))
    voice = VoiceNotes(
        hass,
        VoicePolicy(
            pipeline_id=options.voice_pipeline,
            owner_id=str(entry.data[CONF_OWNER_ID]),
            bridge_on=options.assist_agent is not None,
            every_trusted_device=options.voice_transcripts,
            in_groups=options.assist_in_groups,
        ),
        judged,
    )
    # Events (files saved, voice notes transcribed first) in arrival order: see events.py.
    events = MessageEvents(
        hass,
        entry.entry_id,
        agent_id,
        options.media_folder,
        download,
        voice=voice,
    )
    async_keep_messages_unrecorded(hass)

    @callback
    def status_changed() -> None:
        async_dispatcher_send(hass, status_signal(entry.entry_id))

    @callback
    def send_status(message_id: str, conversation_id: str, status: str) -> None:
        hass.bus.async_fire(
            EVENT_MESSAGE_STATUS,
            message_status_data(entry.entry_id, agent_id, message_id, conversation_id, status),
        )

    @callback
    def revoked() -> None:
        async_start_reauth(hass, entry)

    failures = DecryptFailures()

    def run_blocking[T](function: Callable[[], T]) -> Any:
        return hass.async_add_executor_job(function)

    config = AgentConfig(
        agent_id=agent_id,
        owner_id=str(entry.data[CONF_OWNER_ID]),
        conversation_id=str(entry.data[CONF_CONVERSATION_ID]),
        server_url=server_url,
        encrypted=options.encrypted,
    )
    if not options.encrypted:
        _LOGGER.warning("Agent %s runs WITHOUT end-to-end encryption (debugging option)", agent_id)
    hooks = AgentHooks(
        run_blocking=run_blocking,
        deliver=events.deliver,
        prepare=events.prepare,
        may_prepare=events.may_prepare,
        status_changed=status_changed,
        revoked=revoked,
        send_status=send_status,
        decryption=DecryptionWatch(
            hass, entry.entry_id, agent_id, agent_name, failures, status_changed
        ).handle,
    )
    extra = {key: value for key, value in document.items() if key not in SECTIONS}
    # The client's trust door, with the saved book: it judges and seals (trust.py).
    door = await trust.async_load(data)
    async_watch_trust(hass, entry.entry_id, agent_name, trust)
    agent = Agent(session, config, hooks, tokens, data, extra, door, store=store)
    entry.async_on_unload(_async_start_once_started(hass, agent))

    async def stop(_event: Event | None = None) -> None:
        await agent.stop()
        await async_advance_at_stop(hass, store, agent_id)
        # Closed: the lock released, the next start reads the disk (a folder put back).
        await store.close()

    entry.async_on_unload(hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, stop))
    entry.async_on_unload(stop)
    return PacerelleRuntime(
        agent, entry.entry_id, trust=trust, decryption_failures=failures, voice=voice
    )


@callback
def _async_start_once_started(hass: HomeAssistant, agent: Agent) -> CALLBACK_TYPE:
    """Connect once Home Assistant has started (at once on a reload); undoes the wait.

    Automations arm their triggers only once Home Assistant has started: messages taken from
    the relay before then would fire events that nothing listens to. The relay keeps them
    until the agent connects.
    """

    @callback
    def start(_hass: HomeAssistant) -> None:
        agent.start()

    return async_at_started(hass, start)


async def _async_load(
    hass: HomeAssistant, entry: PacerelleConfigEntry, store: AgentStore, agent_name: str
) -> tuple[dict[str, Any], AgentData]:
    """The document and the agent's data; a new identity only for a store that never had one."""
    path = hass.config.path(".storage", DOMAIN)
    try:
        # Reading and parsing the rows takes milliseconds: in the executor (the client's store).
        document, data = await store.load_data()
        _check_installation(document)
    except (StoreError, AgentDataError) as err:
        problem = err.problem if isinstance(err, StoreError) else StoreProblem.CORRUPT
        # No log line here: Home Assistant logs the ConfigEntryError with its message.
        raise_store_issue(hass, entry.entry_id, agent_name, problem, path)
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="store_unreadable",
            translation_placeholders={"agent_name": agent_name, "problem": problem.value},
        ) from err
    clear_store_issue(hass, entry.entry_id)
    if data is None:
        # First start of a new installation: the identity is made once and saved before
        # anything about it is published.
        data = AgentData(await hass.async_add_executor_job(AgentSignalState.new))
        await store.commit(document, data)
    # A store behind its witness was put back from an older copy (store/generation.py).
    document, restored = await async_advance(
        hass,
        store,
        document,
        agent_id=str(entry.data[CONF_AGENT_ID]),
        entry_id=entry.entry_id,
        agent_name=agent_name,
    )
    if restored:
        # The newer state's one-time prekeys are replaced before anything is published.
        _LOGGER.warning("The store of agent %s is an older copy (restored)", agent_name)
        data = await hass.async_add_executor_job(rekeyed_after_restore, data)
        await store.commit(document, data)
    return document, data


def _check_installation(document: Mapping[str, Any]) -> None:
    installation = document.get("installation")
    if not isinstance(installation, dict) or not isinstance(installation.get("token"), str):
        raise StoreError(StoreProblem.CORRUPT, "no installation in the store")


__all__ = [
    "EVENT_MESSAGE",
    "PacerelleConfigEntry",
    "PacerelleRuntime",
    "async_setup_runtime",
    "event_data",
    "status_signal",
]
