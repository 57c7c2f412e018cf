"""The repairs of one entry, all gone with it (async_remove_entry).

Each repair of an agent is named `<kind>_<entry id>` or `<kind>_<entry id>_<what>`, the
kinds below; an entry id is Home Assistant's own (a ULID), never the relay's, so the rule
cannot reach another entry's repairs. Persistent ones (a device's, a group's notice, a
restored store's) would otherwise stay in `.storage/repairs.issue_registry` for good, with
the relay's person ids and the devices' codes.
"""

from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir

from ..const import DOMAIN
from ..trust import TRUST_REVERIFY
from .blocked_groups import BLOCKED_IN_GROUP
from .devices import MORE_DEVICES, UNTRUSTED_DEVICE
from .groups import NEW_GROUP
from .runtime import DECRYPTION_STALLED, STORE, STORE_RESTORED

KINDS: Final = (
    UNTRUSTED_DEVICE,
    MORE_DEVICES,
    NEW_GROUP,
    BLOCKED_IN_GROUP,
    DECRYPTION_STALLED,
    STORE_RESTORED,
    STORE,
    TRUST_REVERIFY,
)


def is_entry_issue(issue_id: str, entry_id: str) -> bool:
    return any(
        issue_id == f"{kind}_{entry_id}" or issue_id.startswith(f"{kind}_{entry_id}_")
        for kind in KINDS
    )


@callback
def async_clear_entry_issues(hass: HomeAssistant, entry_id: str) -> None:
    """Delete every repair of a removed entry, ignored ones included."""
    ours = [
        issue_id
        for domain, issue_id in ir.async_get(hass).issues
        if domain == DOMAIN and is_entry_issue(issue_id, entry_id)
    ]
    for issue_id in ours:
        ir.async_delete_issue(hass, DOMAIN, issue_id)
