"""Trust on the Home Assistant side: the one door that decides whom the agent believes.

Every request is judged (client/trust.py) when it is handed over, before its events fire:
the event carries `trusted` and `trust_state`, a blocked device's message is dropped with
a log line, and a device that is new or changed raises a repair issue showing its
verification code. Sends without a source message go only to a trusted device
(`device_policy`).

Group messages: a member seals them with their group sender key, which reached the agent
over a Signal session with one device of that member. That session is all the agent can
check, so a group message is judged as that device presenting that session's identity key
(recorded with the key at delivery, client/groups.py), whichever device the relay says
wrote it: a member's second device is trusted once the key of the device that delivered
the member's sender key is, and blocking that device drops all the member's group
messages. Its sender is the key's owner: a message whose frame names another member is
refused (client/crypto_jobs.py), so the relay cannot write as a member. What remains:
members of a group share their sender keys with each other, so one member can seal a
message with another's key and write as them; a group message is only as trustworthy as
every member of the group. Keys stored before their sender was recorded judge unverified.
The agent seals its own group messages only with a key a message would be trusted from,
or, for a reply, the asker's own (`group_key_policy`): a key the relay delivers over a
session it made up is never used to seal, and a group where nobody is trusted gets
replies only (`no_trusted_device` otherwise, as for a person's unverified devices).

Where it is kept: `.storage/pacerelle.trust.<entry id>`, a Home Assistant store of its own
beside the encrypted agent store (it holds public identity keys and decisions, no secret),
so adding it needed no migration of the agent store. When it is absent (a store written
before trust existed) it is seeded from the agent's sessions: the owner's devices trusted,
everyone else's unverified.
"""

import logging
import time
from collections.abc import Callable
from typing import Final
from urllib.parse import unquote

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.storage import Store

from .client.agent import Agent
from .client.groups import GroupKey
from .client.inbox import Request
from .client.sender import SendError
from .client.server_answers import is_device_id
from .client.signal.session import DEVICE_SEPARATOR, PeerAddress
from .client.trust import DeviceTrust, TrustBook, TrustState
from .const import DOMAIN

_LOGGER = logging.getLogger(__name__)

STORE_VERSION: Final = 1
SESSION_PREFIX: Final = "human:"

type TrustListener = Callable[[DeviceTrust, DeviceTrust | None], None]


class TrustManager:
    """One agent's trust book, judged against the agent's Signal sessions."""

    def __init__(self, hass: HomeAssistant, entry_id: str, owner_id: str) -> None:
        self._hass = hass
        self._owner_id = owner_id
        self._store: Store[dict[str, object]] = Store(
            hass, STORE_VERSION, f"{DOMAIN}.trust.{entry_id}", private=True
        )
        self.book = TrustBook()
        self._agent: Agent | None = None
        self._listeners: list[TrustListener] = []

    async def async_load(self, agent: Agent) -> None:
        """Read the book (or seed it from the sessions of an agent that predates trust),
        and hold the agent's sends without a source to trusted devices."""
        self._agent = agent
        agent.set_device_policy(self.device_policy)
        agent.set_group_key_policy(self.group_key_policy)
        saved = await self._store.async_load()
        if saved is not None:
            self.book = TrustBook.from_json(saved)
            return
        self.book = TrustBook.seeded(_sessions(agent), self._owner_id, time.time())
        await self._store.async_save(self.book.to_json())

    @callback
    def add_listener(self, listener: TrustListener) -> Callable[[], None]:
        """Called with (the judged device, what was known before) on every change of state."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @callback
    def judge(self, request: Request) -> DeviceTrust:
        """The sender's device as of this request (recorded; listeners told of a change).

        A blocked device's request is marked processed: it is dropped, not left pending."""
        device, key = self.presented(request)
        before = self.book.get(request.sender_id, device)
        self.book, judged = self.book.observe(
            request.sender_id, device, key, self._owner_id, time.time()
        )
        if before is None or before.state is not judged.state or before.identity_key != key:
            # Saved now, not later: a reload must not find an older book than this one.
            self._hass.async_create_task(
                self._store.async_save(self.book.to_json()), "pacerelle trust save"
            )
            for listener in list(self._listeners):
                listener(judged, before)
        if judged.state is TrustState.BLOCKED and self._agent is not None:
            self._hass.async_create_background_task(
                self._agent.mark_processed(request.message_id, "Dropped: from a blocked device"),
                f"pacerelle drop {request.message_id}",
            )
        return judged

    @callback
    def peek(self, request: Request) -> DeviceTrust:
        """The sender's device as `judge` would find it, recording nothing (voice.py decides
        before the event whether a note may be transcribed; `judge` still runs at delivery)."""
        device, key = self.presented(request)
        return self.book.judge(request.sender_id, device, key, self._owner_id)

    async def async_decide(
        self, person_id: str, device_id: str, state: TrustState, *, key: bytes | None
    ) -> DeviceTrust:
        """The user's decision for the device, for the key they were shown (KeyChangedError: it
        presents another one now, nothing decided; KeyError: unknown device)."""
        before = self.book.get(person_id, device_id)
        self.book = self.book.decided(person_id, device_id, state, key=key)
        await self._store.async_save(self.book.to_json())
        decided = self.book.devices[f"{person_id}|{device_id}"]
        for listener in list(self._listeners):
            listener(decided, before)
        return decided

    def device_policy(
        self, person_id: str, conversation_id: str, proposed: str | None, answer: bool
    ) -> str | None:
        """Where a send goes. An answer to a device's own request goes to it, unless it is
        blocked (SendError). Without a source: the proposed device if it is trusted, else
        the person's most recently seen trusted device; SendError if none is. With no
        session to the proposed device either, the send fails as before (nobody wrote)."""
        known = self.book.get(person_id, proposed) if proposed is not None else None
        if answer:
            if known is not None and known.state is TrustState.BLOCKED:
                raise SendError("blocked_device", f"{person_id} device {proposed}")
            return proposed
        if known is not None and known.trusted:
            return known.device_id
        trusted = self.book.trusted_devices(person_id)
        if trusted:
            return trusted[0].device_id
        if not self._has_session(person_id, conversation_id, proposed):
            return proposed
        raise SendError("no_trusted_device", person_id)

    def group_key_policy(self, answered: str | None) -> Callable[[GroupKey], bool]:
        """Which group keys a group send may be sealed with: those a message would be
        trusted from (judged as for incoming ones), and for a reply the asker's own (same
        session and identity key, as a direct answer goes to the asking device). Judged on
        a snapshot of the book: the predicate runs in the executor."""
        book, owner = self.book, self._owner_id
        held = self._agent.data.conversations.group_keys if self._agent is not None else {}
        asker = held.get(answered) if answered is not None else None

        def allowed(key: GroupKey) -> bool:
            if asker is not None and _same_sender(key, asker):
                return True
            if key.sender_id is None or key.sender_device_id is None:
                return False
            judged = book.judge(key.sender_id, key.sender_device_id, key.sender_identity, owner)
            return judged.trusted

        return allowed

    def _has_session(self, person_id: str, conversation_id: str, device: str | None) -> bool:
        if self._agent is None or device is None or not is_device_id(device):
            return False
        peer = PeerAddress(person_id, conversation_id, int(device))
        return self._agent.data.signal.record(peer).current is not None

    async def async_remove(self) -> None:
        await self._store.async_remove()

    def presented(self, request: Request) -> tuple[str, bytes | None]:
        """(device, identity key) the request is judged by: a direct message's sending
        device and the identity key of its session; a group message's key's sender device
        and the identity key its session had when it delivered the key (None: a key stored
        before that was recorded, judged unverified)."""
        if not request.encrypted or self._agent is None:
            return request.sender_device_id, None
        if request.is_group:
            key = self._agent.data.conversations.group_keys.get(request.group_key or "")
            if key is None or key.sender_device_id is None:
                return request.sender_device_id, None
            return key.sender_device_id, key.sender_identity
        if not is_device_id(request.sender_device_id):
            return request.sender_device_id, None
        peer = PeerAddress(
            request.sender_id, request.conversation_id, int(request.sender_device_id)
        )
        return request.sender_device_id, self._agent.data.signal.record(peer).trusted_identity


def _same_sender(key: GroupKey, other: GroupKey) -> bool:
    return (key.sender_id, key.sender_device_id, key.sender_identity) == (
        other.sender_id,
        other.sender_device_id,
        other.sender_identity,
    )


def _sessions(agent: Agent) -> list[tuple[str, str, bytes]]:
    """(person, device, identity key) of every session the agent holds."""
    found = []
    for name, record in agent.data.signal.sessions.items():
        body, separator, device = name.rpartition(DEVICE_SEPARATOR)
        if not separator or not body.startswith(SESSION_PREFIX) or record.trusted_identity is None:
            continue
        person = unquote(body.removeprefix(SESSION_PREFIX).split(":", 1)[0])
        found.append((person, device, record.trusted_identity))
    return found


async def async_remove_trust(hass: HomeAssistant, entry_id: str) -> None:
    """Forget an entry's trust decisions (the entry is being deleted)."""
    await TrustManager(hass, entry_id, "").async_remove()
