"""Which devices have a trust repair ("a device of <person> wants to talk to <agent>").

One fixable repair per device waiting for a decision (unverified, or its key changed; repairs.py
makes the fix flow). The relay can announce devices at will, so repairs follow the trust book
and are bounded: at most MAX_DEVICE_REPAIRS shown per agent (ignored ones aside), and one "more
devices want to talk" repair counts the rest; as room frees, the waiting device seen last gets
its repair. A repair goes once its device is decided, leaves the book, or with its entry
(issues/entry.py); every change of the book is told here (trust.py). Every undecided device
stays decidable: it has a repair or is counted; at each start the waiting devices are taken
again from the book. Titles are plain text; a fix flow's markdown names no relay id.
"""

from collections.abc import Callable
from typing import Final

from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir

from ..client import DeviceTrust, TrustState
from ..const import DOMAIN
from ..limits import MAX_DEVICE_REPAIRS
from ..trust import TrustManager

UNTRUSTED_DEVICE: Final = "untrusted_device"
MORE_DEVICES: Final = "more_untrusted_devices"
WAITING: Final = (TrustState.UNVERIFIED, TrustState.CHANGED)

type DeviceKey = tuple[str, str]  # (person id, device id), exactly as the relay gave them


def issue_id(entry_id: str, person_id: str, device_id: str) -> str:
    return f"{UNTRUSTED_DEVICE}_{entry_id}_{person_id}_{device_id}"


def more_devices_id(entry_id: str) -> str:
    return f"{MORE_DEVICES}_{entry_id}"


def placeholders(agent_name: str, device: DeviceTrust) -> dict[str, str]:
    """The repair's and its fix flow's: `person` and `device` only in titles (plain text)."""
    return {
        "agent_name": agent_name,
        "person": device.person_id,
        "device": device.device_id,
        "code": device.code or "-",
        "state": device.state.value,
    }


def device_repairs(hass: HomeAssistant, entry_id: str) -> dict[DeviceKey, ir.IssueEntry]:
    """The agent's device repairs in the registry (ignored ones too), by their device."""
    found = {}
    for (domain, _), issue in ir.async_get(hass).issues.items():
        data = issue.data or {}
        if (
            domain == DOMAIN
            and issue.translation_key == UNTRUSTED_DEVICE
            and data.get("entry_id") == entry_id
        ):
            found[(str(data["person_id"]), str(data["device_id"]))] = issue
    return found


class DeviceRepairs:
    """One loaded agent's device repairs, kept to its trust book within the bound."""

    def __init__(
        self, hass: HomeAssistant, entry_id: str, agent_name: str, trust: TrustManager
    ) -> None:
        self._hass = hass
        self._entry_id = entry_id
        self._agent_name = agent_name
        self._trust = trust
        # Undecided, without a repair for want of room: at first, each such one of the book.
        repairs = device_repairs(hass, entry_id)
        self._waiting: set[DeviceKey] = {
            key
            for device in trust.book.devices.values()
            if device.state in WAITING
            and (key := (device.person_id, device.device_id)) not in repairs
        }
        self._syncing = self._again = False

    @callback
    def changed(self, device: DeviceTrust, _before: DeviceTrust | None) -> None:
        key = (device.person_id, device.device_id)
        if device.state in WAITING and key not in device_repairs(self._hass, self._entry_id):
            self._waiting.add(key)  # raised by sync if there is room
        self.sync()

    @callback
    def registry_changed(self, event: Event[ir.EventIssueRegistryUpdatedData]) -> None:
        """A repair of ours was fixed, ignored or deleted: there may be room now."""
        if event.data["issue_id"].startswith(f"{UNTRUSTED_DEVICE}_{self._entry_id}_"):
            self.sync()

    @callback
    def sync(self) -> None:
        """The repairs made equal to the book, within the bound. The registry tells of each
        change at once (here too, from inside a change of ours): that asks for one more
        pass, after this one."""
        if self._syncing:
            self._again = True
            return
        self._syncing = True
        try:
            self._again = True
            while self._again:
                self._again = False
                self._sync()
        finally:
            self._syncing = False

    def _sync(self) -> None:
        book = self._trust.book
        shown: dict[DeviceKey, DeviceTrust] = {}
        for key, issue in device_repairs(self._hass, self._entry_id).items():
            device = book.get(*key)
            if device is None or device.state not in WAITING:  # evicted, or decided
                ir.async_delete_issue(self._hass, DOMAIN, issue.issue_id)
            elif issue.dismissed_version is None:
                shown[key] = device
            else:
                self._raise(device)  # ignored: kept so, its code and state kept current
        # Past the bound (a registry from before it): the least recently seen ones wait.
        by_recency = sorted(shown.values(), key=lambda d: d.seen_at, reverse=True)
        for device in by_recency[MAX_DEVICE_REPAIRS:]:
            ir.async_delete_issue(self._hass, DOMAIN, self._id(device))
            key = (device.person_id, device.device_id)
            del shown[key]
            self._waiting.add(key)
        for device in by_recency[:MAX_DEVICE_REPAIRS]:
            self._raise(device)
        waiting = [
            device
            for key in self._waiting
            if key not in shown and (device := book.get(*key)) is not None
            if device.state in WAITING
        ]
        waiting.sort(key=lambda d: d.seen_at, reverse=True)
        room = MAX_DEVICE_REPAIRS - len(shown)
        for device in waiting[:room]:
            self._raise(device)
        self._waiting = {(d.person_id, d.device_id) for d in waiting[room:]}
        self._count_waiting()

    def _id(self, device: DeviceTrust) -> str:
        return issue_id(self._entry_id, device.person_id, device.device_id)

    def _raise(self, device: DeviceTrust) -> None:
        ir.async_create_issue(
            self._hass,
            DOMAIN,
            self._id(device),
            is_fixable=True,
            is_persistent=True,
            severity=ir.IssueSeverity.WARNING,
            translation_key=UNTRUSTED_DEVICE,
            translation_placeholders=placeholders(self._agent_name, device),
            data={
                "entry_id": self._entry_id,
                "person_id": device.person_id,
                "device_id": device.device_id,
            },
        )

    def _count_waiting(self) -> None:
        if not self._waiting:
            self.clear_count()
            return
        ir.async_create_issue(
            self._hass,
            DOMAIN,
            more_devices_id(self._entry_id),
            is_fixable=False,
            is_persistent=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=MORE_DEVICES,
            translation_placeholders={
                "agent_name": self._agent_name,
                "count": str(len(self._waiting)),
                "max": str(MAX_DEVICE_REPAIRS),
            },
        )

    @callback
    def clear_count(self) -> None:
        ir.async_delete_issue(self._hass, DOMAIN, more_devices_id(self._entry_id))


@callback
def _ours(data: ir.EventIssueRegistryUpdatedData) -> bool:
    return data["domain"] == DOMAIN and data["action"] != "create"


@callback
def async_watch_devices(
    hass: HomeAssistant, entry_id: str, agent_name: str, trust: TrustManager
) -> Callable[[], None]:
    """Keep the agent's device repairs to its book from now on; the callable stops that."""
    repairs = DeviceRepairs(hass, entry_id, agent_name, trust)
    repairs.sync()
    stop_trust = trust.add_listener(repairs.changed)
    stop_registry = hass.bus.async_listen(
        ir.EVENT_REPAIRS_ISSUE_REGISTRY_UPDATED, repairs.registry_changed, event_filter=_ours
    )

    @callback
    def stop() -> None:
        stop_trust()
        stop_registry()
        repairs.clear_count()

    return stop
