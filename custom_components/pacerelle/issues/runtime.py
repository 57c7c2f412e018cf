"""Repair issues the runtime raises: an unreadable store, a restored store, stalled decryption.

A peer's changed identity key has no issue of its own here: trust.py judges the message that
presents it and repairs.py raises the one fixable trust issue for that device (one change,
one repair). The relay's bare IDENTITY_CHANGED notice only logs: the key it announces is
judged when a message presents it.
"""

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..client import DeviceKey, StoreProblem
from ..const import DOMAIN
from .markdown import markdown_text

DECRYPTION_STALLED = "decryption_stalled"
STORE_RESTORED = "store_restored"
STORE = "store"


def store_issue_id(entry_id: str) -> str:
    return f"{STORE}_{entry_id}"


def raise_store_issue(
    hass: HomeAssistant, entry_id: str, agent_name: str, problem: StoreProblem, path: str
) -> None:
    """The store cannot be read: say what happened and what to do (never a new identity)."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        store_issue_id(entry_id),
        is_fixable=False,
        severity=ir.IssueSeverity.ERROR,
        translation_key=problem.value,
        translation_placeholders={"agent_name": agent_name, "path": path},
    )


def clear_store_issue(hass: HomeAssistant, entry_id: str) -> None:
    ir.async_delete_issue(hass, DOMAIN, store_issue_id(entry_id))


def decryption_stalled_id(entry_id: str, device: DeviceKey) -> str:
    return (
        f"{DECRYPTION_STALLED}_{entry_id}_{device.sender_id}_{device.conversation_id}"
        f"_{device.device_id}"
    )


def raise_decryption_stalled(
    hass: HomeAssistant,
    entry_id: str,
    agent_name: str,
    device: DeviceKey,
    device_code: str | None,
) -> None:
    """A device's messages stopped decrypting: most likely a restored, older agent state."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        decryption_stalled_id(entry_id, device),
        is_fixable=False,
        is_persistent=False,
        severity=ir.IssueSeverity.ERROR,
        translation_key=DECRYPTION_STALLED,
        translation_placeholders={
            "agent_name": agent_name,
            "peer_id": device.sender_id,  # the title: plain text
            "peer": markdown_text(device.sender_id),  # the description: markdown
            "device_id": device.device_id,
            "device_code": device_code or "unknown",
        },
    )


def clear_decryption_stalled(hass: HomeAssistant, entry_id: str, device: DeviceKey) -> None:
    ir.async_delete_issue(hass, DOMAIN, decryption_stalled_id(entry_id, device))


def raise_store_restored(hass: HomeAssistant, entry_id: str, agent_name: str) -> None:
    """The store is older than the last one Home Assistant wrote (store/generation.py)."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        f"{STORE_RESTORED}_{entry_id}",
        is_fixable=False,
        is_persistent=True,  # until a new session or the user: a restart changes nothing
        severity=ir.IssueSeverity.WARNING,
        translation_key=STORE_RESTORED,
        translation_placeholders={"agent_name": agent_name},
    )


def clear_store_restored(hass: HomeAssistant, entry_id: str) -> None:
    ir.async_delete_issue(hass, DOMAIN, f"{STORE_RESTORED}_{entry_id}")
