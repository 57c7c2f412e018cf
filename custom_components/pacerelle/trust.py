"""Trust on the Home Assistant side: where the client's trust book is kept, and shown.

The decisions themselves are the client's (client/trust/door.py, one door: every request
judged once when opened, every seal checked against the key it is for). This adapter
loads the book for the door, saves it whenever the door changes it, and tells its
listeners (repairs.py) of every change of state, before the message that revealed it acts.

Group messages: a member seals them with their group sender key, which reached the agent
over a Signal session with one device of that member. That session is all the agent can
check, so a group message is judged as that device presenting that session's identity key
(recorded with the key at delivery, client/conversations/groups.py), whichever device the relay says
wrote it: a member's second device is trusted once the key of the device that delivered
the member's sender key is, and blocking that device drops all the member's group
messages. Its sender is the key's owner: a message whose frame names another member is
refused (client/crypto_jobs.py), so the relay cannot write as a member. What remains:
members of a group share their sender keys with each other, so one member can seal a
message with another's key and write as them; a group message is only as trustworthy as
every member of the group. Keys stored before their sender was recorded judge unverified.
The agent seals its own group messages only with a key a message would be trusted from,
or, for a reply, the asker's own: a key the relay delivers over a session it made up is
never used to seal, and a group where nobody is trusted gets replies only
(`no_trusted_device` otherwise, as for a person's unverified devices).

Where it is kept: `.storage/pacerelle.trust.<entry id>`, a Home Assistant store of its own
beside the encrypted agent store (it holds public identity keys and decisions, no secret),
so adding it needed no migration of the agent store. When it is absent (a store written
before trust existed) it is seeded from the agent's sessions: the owner's devices trusted,
everyone else's unverified. Its format is TrustBook.to_json, unchanged by the door.
"""

import time
from collections.abc import Callable
from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.storage import Store

from .client import (
    AgentData,
    DeviceTrust,
    TrustBook,
    TrustDoor,
    TrustListener,
    TrustState,
    session_identities,
)
from .const import DOMAIN

STORE_VERSION: Final = 1


class TrustManager:
    """One agent's trust book in its Home Assistant store, and the client's door on it."""

    def __init__(self, hass: HomeAssistant, entry_id: str, owner_id: str) -> None:
        self._hass = hass
        self._owner_id = owner_id
        self._store: Store[dict[str, object]] = Store(
            hass, STORE_VERSION, f"{DOMAIN}.trust.{entry_id}", private=True
        )
        self.door = TrustDoor(owner_id)
        self._listeners: list[TrustListener] = []

    async def async_load(self, data: AgentData) -> TrustDoor:
        """The door with the saved book (or one seeded from the sessions of an agent that
        predates trust), for the agent to be built with."""
        saved = await self._store.async_load()
        if saved is not None:
            book = TrustBook.from_json(saved)
        else:
            book = TrustBook.seeded(session_identities(data.signal), self._owner_id, time.time())
            await self._store.async_save(book.to_json())
        self.door = TrustDoor(self._owner_id, book, save=self._save, changed=self._changed)
        return self.door

    @property
    def book(self) -> TrustBook:
        return self.door.book

    @callback
    def add_listener(self, listener: TrustListener) -> Callable[[], None]:
        """Called with (the judged device, what was known before) on every change of state."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @callback
    def _save(self, book: TrustBook) -> None:
        # Saved now, not later: a reload must not find an older book than this one.
        self._hass.async_create_task(self._store.async_save(book.to_json()), "pacerelle trust save")

    @callback
    def _changed(self, device: DeviceTrust, before: DeviceTrust | None) -> None:
        for listener in list(self._listeners):
            listener(device, before)

    async def async_decide(
        self, person_id: str, device_id: str, state: TrustState, *, key: bytes | None
    ) -> DeviceTrust:
        """The user's decision for the device, for the key they were shown (KeyChangedError: it
        presents another one now, nothing decided; KeyError: unknown device)."""
        decided = self.door.decide(person_id, device_id, state, key=key)
        await self._store.async_save(self.door.book.to_json())
        return decided

    async def async_remove(self) -> None:
        await self._store.async_remove()


async def async_remove_trust(hass: HomeAssistant, entry_id: str) -> None:
    """Forget an entry's trust decisions (the entry is being deleted)."""
    await TrustManager(hass, entry_id, "").async_remove()
