"""The trust repairs against a relay that invents devices (issues/devices.py), through the
emulator and Home Assistant's own issue registry and repairs flows: at most
MAX_DEVICE_REPAIRS at once plus one that counts the rest, each gone with its device's
eviction from the trust book or its decision and with nothing else ("keep it unverified"
leaves it; one lost before comes back at the next start), room handed on to the device seen
last, a person's id shown as text, and every repair gone with the entry."""

import re
from string import Formatter
from typing import Any

import probatio
import pytest
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.values import trust_book
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.issues.devices import (
    MORE_DEVICES,
    UNTRUSTED_DEVICE,
    device_repairs,
    issue_id,
    more_devices_id,
)
from custom_components.pacerelle.issues.runtime import raise_store_restored
from custom_components.pacerelle.limits import MAX_DEVICE_REPAIRS
from tests.helpers.agent import Agent, start_agent
from tests.helpers.conversations import strings
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of
from tests.helpers.trust import forged_text

# A trust book this small lets the relay overflow it with a few devices (1000 in real life).
SMALL_BOOK = MAX_DEVICE_REPAIRS + 4
HOSTILE = "usr_![x](http://relay/img.png)[click](http://relay)<b>"
UNESCAPED = re.compile(r"(?<!\\)[!\[\]()<>*_`]")


async def start(hass: HomeAssistant, emulator: EmulatorHandle) -> Agent:
    assert await async_setup_component(hass, "repairs", {})
    agent = await start_agent(hass, emulator, spoken=True)  # the owner's phone 1: trusted
    return agent


async def invent_devices(emulator: EmulatorHandle, agent: Agent, devices: range) -> None:
    """The relay announces each device as a new one of the owner's, each writing once."""
    owner = agent.installed.owner_id
    for device in devices:
        await emulator.send(agent.conversation_id, text="status", device_id=str(device))
    book = agent.runtime.trust
    await wait_until(lambda: book.book.get(owner, str(devices[-1])) is not None, within=60)


def repaired(hass: HomeAssistant, agent: Agent) -> set[str]:
    """The device ids of the owner's open (not ignored) repairs."""
    return {
        device
        for (_, device), issue in device_repairs(hass, agent.entry.entry_id).items()
        if issue.dismissed_version is None
    }


def waiting_count(hass: HomeAssistant, agent: Agent) -> int:
    issue = ir.async_get(hass).async_get_issue(DOMAIN, more_devices_id(agent.entry.entry_id))
    return 0 if issue is None else int((issue.translation_placeholders or {})["count"])


def ours(hass: HomeAssistant) -> list[str]:
    return [issue for domain, issue in ir.async_get(hass).issues if domain == DOMAIN]


async def settled(hass: HomeAssistant) -> None:
    await hass.async_block_till_done()


async def test_devices_a_relay_invents_get_bounded_repairs_that_go_with_their_eviction(
    hass: HomeAssistant, emulator: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trust_book, "MAX_TRUST_RECORDS", SMALL_BOOK)
    agent = await start(hass, emulator)
    owner = agent.installed.owner_id
    invented = range(2, 2 + SMALL_BOOK + 6)  # more devices than the book holds
    await invent_devices(emulator, agent, invented)
    await settled(hass)

    book = agent.runtime.trust.book
    assert len(book.devices) == SMALL_BOOK
    kept = {d.device_id for d in book.devices.values()} - {"1"}  # the least recent forgotten
    phone = book.get(owner, "1")
    assert phone is not None
    assert phone.trusted  # a decision is never what the book forgets
    # At most MAX_DEVICE_REPAIRS repairs, each of a device the book still holds; one more
    # repair counts the devices the book holds that have none.
    shown = repaired(hass, agent)
    assert len(shown) == MAX_DEVICE_REPAIRS, (
        " ".join(sorted(shown, key=int)),
        " ".join(sorted(kept, key=int)),
    )
    assert shown <= kept
    assert waiting_count(hass, agent) == len(kept) - MAX_DEVICE_REPAIRS
    assert len(ours(hass)) == MAX_DEVICE_REPAIRS + 1
    # The devices seen last got the room the forgotten ones left.
    assert str(invented[-1]) in shown
    summary = ir.async_get(hass).async_get_issue(DOMAIN, more_devices_id(agent.entry.entry_id))
    assert summary is not None
    assert (summary.is_persistent, summary.is_fixable) == (False, False)
    text = strings()["issues"][MORE_DEVICES]["description"]
    assert f"at most {MAX_DEVICE_REPAIRS} repairs" in text.format(
        **summary.translation_placeholders
    )

    # A reload checks the persistent repairs against the book again: nothing changes, and
    # the devices waiting are counted again, from the book.
    assert await hass.config_entries.async_reload(agent.entry.entry_id)
    await settled(hass)
    assert repaired(hass, agent) == shown
    assert waiting_count(hass, agent) == len(kept) - MAX_DEVICE_REPAIRS

    # Removing the entry removes every repair of it, persistent ones included.
    raise_store_restored(hass, agent.entry.entry_id, "Home")
    assert await hass.config_entries.async_remove(agent.entry.entry_id)
    await settled(hass)
    assert ours(hass) == []


async def test_a_decision_or_an_ignore_hands_the_room_on_and_keep_leaves_the_repair(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    owner = agent.installed.owner_id
    entry_id = agent.entry.entry_id
    invented = range(2, 2 + MAX_DEVICE_REPAIRS + 2)
    await invent_devices(emulator, agent, invented)
    await settled(hass)
    first = {str(d) for d in invented[:MAX_DEVICE_REPAIRS]}
    assert repaired(hass, agent) == first
    assert waiting_count(hass, agent) == 2

    # Nothing is chosen beforehand, and a form sent back without a choice decides nothing.
    flows = hass.data["repairs"]["flow_manager"]
    form = await flows.async_init(DOMAIN, context={"issue_id": issue_id(entry_id, owner, "11")})
    [field] = form["data_schema"].schema
    assert field.default is probatio.UNDEFINED
    unchosen = await flows.async_configure(form["flow_id"], {})
    assert (unchosen["type"], unchosen["errors"]) == (FlowResultType.FORM, {"decision": "choose"})
    # "Keep it unverified" decides nothing: the flow aborts, the repair stays, no room frees.
    kept = await flows.async_configure(form["flow_id"], {"decision": "keep"})
    assert (kept["type"], kept["reason"]) == (FlowResultType.ABORT, "kept")
    await settled(hass)
    assert repaired(hass, agent) == first
    assert waiting_count(hass, agent) == 2

    # A decision (block) and Home Assistant's "Ignore" each hand their room on.
    form = await flows.async_init(DOMAIN, context={"issue_id": issue_id(entry_id, owner, "2")})
    done = await flows.async_configure(form["flow_id"], {"decision": "block"})
    assert done["type"] is FlowResultType.CREATE_ENTRY
    ir.async_ignore_issue(hass, DOMAIN, issue_id(entry_id, owner, "11"), True)
    await settled(hass)
    assert repaired(hass, agent) == (first - {"2", "11"}) | {str(d) for d in invented[-2:]}
    assert waiting_count(hass, agent) == 0
    # The ignored device, unverified still, keeps its (ignored) repair: decidable later.
    again = await emulator.send(agent.conversation_id, text="again", device_id="11")
    assert (await event_of(agent, again))["trusted"] is False
    await settled(hass)
    assert device_repairs(hass, entry_id)[(owner, "11")].dismissed_version is not None

    # A repair an earlier version removed on "keep" (device 3, unverified) comes back at the
    # next start; a repair left of a decided device (2, blocked) goes.
    ir.async_delete_issue(hass, DOMAIN, issue_id(entry_id, owner, "3"))
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue_id(entry_id, owner, "2"),
        is_fixable=True,
        is_persistent=True,
        severity=ir.IssueSeverity.WARNING,
        translation_key=UNTRUSTED_DEVICE,
        data={"entry_id": entry_id, "person_id": owner, "device_id": "2"},
    )
    await settled(hass)
    assert "3" not in repaired(hass, agent)
    assert await hass.config_entries.async_reload(entry_id)
    await settled(hass)
    assert repaired(hass, agent) == (first - {"2", "11"}) | {str(d) for d in invented[-2:]}
    assert waiting_count(hass, agent) == 0

    # Repairs past the bound (one ignored shown again): the least recently seen one waits.
    ir.async_ignore_issue(hass, DOMAIN, issue_id(entry_id, owner, "11"), False)
    await settled(hass)
    assert len(repaired(hass, agent)) == MAX_DEVICE_REPAIRS
    assert "11" in repaired(hass, agent)
    assert "3" not in repaired(hass, agent)
    assert waiting_count(hass, agent) == 1


async def test_a_persons_id_is_text_wherever_a_repair_is_markdown(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start(hass, emulator)
    await forged_text(emulator, agent.installed, HOSTILE, "hello")
    issue = issue_id(agent.entry.entry_id, HOSTILE, "1")
    await wait_until(lambda: ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None)
    entry = ir.async_get(hass).async_get_issue(DOMAIN, issue)
    assert entry is not None
    assert entry.data is not None
    assert entry.data["person_id"] == HOSTILE  # compared exactly as received
    # The title is plain text: the id as it is.
    repair = strings()["issues"][UNTRUSTED_DEVICE]
    assert HOSTILE in repair["title"].format(**entry.translation_placeholders)
    # The fix flow's description (markdown) holds nothing of the relay's unescaped.
    flows = hass.data["repairs"]["flow_manager"]
    form = await flows.async_init(DOMAIN, context={"issue_id": issue})
    step = repair["fix_flow"]["step"]["init"]
    shown: dict[str, Any] = form["description_placeholders"]
    assert HOSTILE in step["title"].format(**shown)
    for _, name, _, _ in Formatter().parse(step["description"]):
        if name:
            assert UNESCAPED.search(shown[name]) is None, (name, shown[name])
    assert "relay" not in step["description"].format(**shown)
