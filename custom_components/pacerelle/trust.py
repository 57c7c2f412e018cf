"""Trust on the Home Assistant side: the client's trust book shown, decided, and told.

The decisions and the book's keeping are the client's (client/trust/door.py, kept.py). This
adapter hands the client, once, the book earlier versions kept in
`.storage/pacerelle.trust.<entry id>` and deletes that file once the store holds it (a copy put
back later changes nothing). It tells its listeners (repairs.py) of every change, before the
message that revealed it acts, and raises `trust_restored` / `trust_lost` when the starting
book may be older than later decisions. A group message is judged as the device whose session
delivered the member's sender key (client/values/groups.py), whichever device the relay names;
a frame naming another member is refused (client/crypto_jobs.py). Members share sender keys,
so a group message is only as trustworthy as every member. The agent seals group messages only
with a key a message would be trusted from (or, for a reply, the asker's own): never a key
over a session the relay made up.
"""

import logging
from collections.abc import Callable
from typing import Any, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.storage import Store

from .client import DeviceTrust, Opening, Request, TrustBook, TrustDoor, TrustListener, TrustState
from .const import DOMAIN

_LOGGER = logging.getLogger(__name__)

# The file of earlier versions (TrustBook.to_json), read once to move the book into the store.
FILE_VERSION: Final = 1


TRUST_REVERIFY: Final = "trust_reverify"


def trust_issue_id(entry_id: str) -> str:
    return f"{TRUST_REVERIFY}_{entry_id}"


class EarlierTrustFile:
    """The trust book of earlier versions, `.storage/pacerelle.trust.<entry id>`: read once
    by the client for a store that does not hold its book yet, removed once it does."""

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        self._file: Store[dict[str, Any]] = Store(
            hass, FILE_VERSION, f"{DOMAIN}.trust.{entry_id}", private=True
        )

    async def load(self) -> dict[str, Any] | None:
        return await self._file.async_load()

    async def remove(self) -> None:
        await self._file.async_remove()


class TrustNews:
    """Who hears of one agent's trust changes, from its opening on: the listeners, and the
    repair of a start that made trusted devices unverified (gone once each is decided)."""

    def __init__(self, hass: HomeAssistant, entry_id: str, agent_name: str) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._agent_name = agent_name
        self._listeners: list[TrustListener] = []
        self._reset: tuple[DeviceTrust, ...] = ()
        self._undecided: set[tuple[str, str]] = set()  # devices the start made unverified

    @callback
    def opened(self, opening: Opening) -> None:
        """The start's trust loss, told as a repair (before anything else can fail)."""
        self._reset = opening.reset
        self._undecided = {(d.person_id, d.device_id) for d in opening.reset}
        if opening.trust_loss is None:
            return
        _LOGGER.warning(
            "The trust decisions of agent %s may be older than those made since (%s): %d "
            "trusted devices are unverified until verified again",
            self._agent_name,
            opening.trust_loss.value,
            len(opening.reset),
        )
        ir.async_create_issue(
            self._hass,
            DOMAIN,
            trust_issue_id(self._entry_id),
            is_fixable=False,
            is_persistent=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=f"trust_{opening.trust_loss.value}",
            translation_placeholders={"agent_name": self._agent_name},
        )

    @callback
    def announce_reset(self) -> None:
        """Tell the listeners (once they listen) of each device the start made unverified."""
        for device in self._reset:
            self.changed(device, None)

    @callback
    def add_listener(self, listener: TrustListener) -> Callable[[], None]:
        """Called with (the judged device, what was known before) on every change of state."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @callback
    def changed(self, device: DeviceTrust, before: DeviceTrust | None) -> None:
        for listener in list(self._listeners):
            listener(device, before)
        if device.state is not TrustState.UNVERIFIED and self._undecided:
            self._undecided.discard((device.person_id, device.device_id))
            if not self._undecided:  # every device the start reset was decided again
                ir.async_delete_issue(self._hass, DOMAIN, trust_issue_id(self._entry_id))


class TrustManager:
    """One agent's trust door as Home Assistant shows and decides it."""

    def __init__(self, door: TrustDoor, news: TrustNews) -> None:
        self.door = door
        self._news = news

    @property
    def book(self) -> TrustBook:
        return self.door.book

    @callback
    def add_listener(self, listener: TrustListener) -> Callable[[], None]:
        """Called with (the judged device, what was known before) on every change of state."""
        return self._news.add_listener(listener)

    def judged_now(self, request: Request) -> DeviceTrust:
        """The key that wrote `request`, judged on the decisions made since (the door)."""
        return self.door.judged_now(request)

    async def async_decide(
        self, person_id: str, device_id: str, state: TrustState, *, key: bytes | None
    ) -> DeviceTrust:
        """The user's decision for the device, for the key they were shown (KeyChangedError: it
        presents another one now, nothing decided; KeyError: unknown device); committed to
        the agent's store when it returns."""
        decided = self.door.decide(person_id, device_id, state, key=key)
        await self.door.keep()
        return decided


async def async_remove_trust(hass: HomeAssistant, entry_id: str) -> None:
    """Forget an entry's trust decisions kept outside its store (the entry is being deleted)."""
    await EarlierTrustFile(hass, entry_id).remove()
