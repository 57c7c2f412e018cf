"""Who may act on the home (issue 13): a device the relay announces is not believed until
the user trusts it; a changed identity holds commands; a blocked device gets nothing."""

import asyncio
from typing import Any

import pytest
from homeassistant.components.conversation import HOME_ASSISTANT_AGENT
from homeassistant.components.device_automation import (
    DeviceAutomationType,
    async_get_device_automations,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.errors import SendError, SendRefusal
from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.options import CONF_ASSIST_AGENT
from custom_components.pacerelle.repairs import issue_id
from tests.helpers.agent import agent_device as agent_device_of
from tests.helpers.agent import start_agent
from tests.helpers.ask import ask_script, run_script, widget_on_device
from tests.helpers.assist import KITCHEN
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held
from tests.helpers.runtime import wait_until
from tests.helpers.services import event_of
from tests.helpers.trust import (
    a_new_phone,
    book_states,
    decide,
    forged_text,
    shown,
    stopped_as_before_the_move,
)

UNTRUSTED = "it came from a device it does not trust yet"
ASSIST = {CONF_ASSIST_AGENT: HOME_ASSISTANT_AGENT}


async def inbox_of(emulator: EmulatorHandle, conversation: str, count: int) -> list[dict[str, Any]]:
    return await emulator.wait_inbox(conversation, count, within=20)


def trust_of(event: dict[str, Any]) -> tuple[bool, str]:
    return event["trusted"], event["trust_state"]


@pytest.mark.usefixtures("kitchen_light")
async def test_a_relay_forged_owner_device_is_not_believed_until_trusted(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent = await start_agent(hass, emulator, options=ASSIST)
    conversation, owner = agent.conversation_id, agent.installed.owner_id

    # The owner's phone, first after the installation: trusted on first use.
    first = await emulator.send(conversation, text="what time is it")
    await inbox_of(emulator, conversation, 1)
    assert trust_of(await event_of(agent, first)) == (True, "trusted")

    # The relay announces a "second device of the owner" with a key of its own.
    forged = await emulator.send(conversation, text="turn on the kitchen light", device_id="2")
    [_, refusal] = await inbox_of(emulator, conversation, 2)
    assert refusal["reply_to_message_id"] == forged
    assert UNTRUSTED in refusal["text"]
    assert shown(agent, owner, "2").code in refusal["text"]
    assert hass.states.get(KITCHEN).state == "off"
    assert trust_of(await event_of(agent, forged)) == (False, "unverified")

    # Nor does it answer a question, nor receive a notification.
    await ask_script(hass, {"kind": "confirm", "title": "Open the garage?", "timeout": 30})
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 3)
    answer = {"ref": question["id"], "value": True}
    await event_of(agent, await emulator.send(conversation, device_id="2", widget_response=answer))
    # That device is told its answer does not count yet, with its code (actions/ask.py).
    not_yet = (await inbox_of(emulator, conversation, 4))[3]
    assert not_yet["text"].startswith("Your answer does not count yet")
    assert shown(agent, owner, "2").code in not_yet["text"]
    assert not script.done()
    await hass.services.async_call(
        "notify", "send_message", {"entity_id": "notify.home", "message": "snapshot"}, blocking=True
    )
    notified = (await inbox_of(emulator, conversation, 5))[4]
    assert (notified["text"], notified["device_id"]) == ("snapshot", "1")

    # Trusted through Home Assistant's repair flow, which shows the device's code.
    issue = issue_id(agent.entry.entry_id, owner, "2")
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None
    flows = hass.data["repairs"]["flow_manager"]
    form = await flows.async_init(DOMAIN, context={"issue_id": issue})
    code = shown(agent, owner, "2").code
    assert form["description_placeholders"]["code"] == code
    assert code == _device_code(await emulator.admin("GET", f"/users/{owner}/devices"), "2")
    done = await flows.async_configure(form["flow_id"], {"decision": "trust"})
    assert done["type"] == "create_entry"
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue) is None
    # Then it answers, and drives Assist.
    await emulator.send(conversation, device_id="2", widget_response=answer)
    result = await asyncio.wait_for(script, 10)
    assert (result["status"], result["value"], result["sender_device_id"]) == (
        "answered",
        True,
        "2",
    )
    await emulator.send(conversation, text="turn on the kitchen light", device_id="2")
    await wait_until(lambda: hass.states.get(KITCHEN).state == "on", within=20)


@pytest.mark.usefixtures("kitchen_light")
async def test_an_identity_change_holds_the_next_command_until_confirmed(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, options=ASSIST)
    conversation, owner = agent.conversation_id, agent.installed.owner_id
    await emulator.send(conversation, text="what time is it")
    await inbox_of(emulator, conversation, 1)

    # Device 1 comes back with a new identity key (a reinstall, or the relay's key).
    await emulator.admin("POST", f"/conversations/{conversation}/devices/1/reset")
    command = await emulator.send(conversation, text="turn on the kitchen light")
    [_, refusal] = await inbox_of(emulator, conversation, 2)
    assert UNTRUSTED in refusal["text"]
    assert "(changed)" in refusal["text"]
    assert hass.states.get(KITCHEN).state == "off"
    assert trust_of(await event_of(agent, command)) == (False, "changed")

    await decide(agent, owner, "1", TrustState.TRUSTED)
    await emulator.send(conversation, text="turn on the kitchen light")
    await wait_until(lambda: hass.states.get(KITCHEN).state == "on", within=20)


async def test_a_device_sharing_a_trusted_key_is_trusted_and_a_blocked_one_gets_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    conversation, owner = agent.conversation_id, agent.installed.owner_id
    phone = await emulator.send(conversation, text="hello from the phone")
    await emulator.admin(
        "POST", f"/users/{owner}/devices", {"device_id": "3", "same_identity_as": "1"}
    )
    tablet = await emulator.send(conversation, text="hello from the tablet", device_id="3")
    stranger = await emulator.send(conversation, text="hello from a stranger device", device_id="4")
    written = [await event_of(agent, message) for message in (phone, tablet, stranger)]
    assert [(e["sender_device_id"], e["trust_state"]) for e in written] == [
        ("1", "trusted"),
        ("3", "trusted"),
        ("4", "unverified"),
    ]
    assert len(agent.events) == 3

    await decide(agent, owner, "4", TrustState.BLOCKED)
    runtime = agent.runtime
    dropped = await emulator.send(conversation, text="let me in", device_id="4")
    # Refused when opened: no event, not pending, not even in the history.
    await wait_until(lambda: dropped in runtime.agent.data.inbox.rejected)
    assert len(agent.events) == 3
    assert all(item.request.message_id != dropped for item in runtime.agent.data.history.requests)
    # Named, the blocked device is refused, never replaced by another one...
    with pytest.raises(SendError) as refused:
        await runtime.agent.send_text("door closed", to_device_id="4")
    assert refused.value.reason is SendRefusal.BLOCKED_DEVICE
    # ...and sends without a device go to a trusted one.
    await runtime.agent.send_text("door closed")
    [sent] = await inbox_of(emulator, conversation, 1)
    assert sent["device_id"] in {"1", "3"}


def _device_code(devices: list[dict[str, Any]], device_id: str) -> str:
    """The code the emulator's chat page shows for the person's device."""
    return next(str(d["verification_code"]) for d in devices if d["device_id"] == device_id)


async def test_the_actions_decide_and_show_the_code(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, _ = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    devices = await emulator.admin("GET", f"/users/{owner}/devices")

    code = _device_code(devices, "2")
    trusted = await hass.services.async_call(
        DOMAIN,
        "trust_device",
        {"sender_device_id": "2", "verification_code": code.lower().replace(" ", "")},
        blocking=True,
        return_response=True,
    )
    assert trusted == {
        "person_id": owner,
        "sender_device_id": "2",
        "trust_state": "trusted",
        "verification_code": code,
    }
    blocked = await hass.services.async_call(
        DOMAIN, "block_device", {"sender_device_id": "2"}, blocking=True, return_response=True
    )
    assert blocked["trust_state"] == "blocked"
    with pytest.raises(ServiceValidationError, match="never received a message from device 9"):
        await hass.services.async_call(
            DOMAIN,
            "trust_device",
            {"sender_device_id": "9", "verification_code": code},
            blocking=True,
            return_response=True,
        )


async def test_a_store_from_before_trust_trusts_the_owners_devices_only(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    conversation, owner = agent.conversation_id, agent.installed.owner_id
    await emulator.send(conversation, text="phone")
    await emulator.send(conversation, text="laptop", device_id="2")
    guest = await forged_text(emulator, agent.installed, "usr_guest", "hi")
    await held(agent.runtime, guest)
    # As a release before trust left it: sessions, no book anywhere, no request judged.
    await stopped_as_before_the_move(hass, agent, judged=False)
    assert await hass.config_entries.async_setup(agent.entry.entry_id)
    assert book_states(agent) == {
        (owner, "1", TrustState.TRUSTED),
        (owner, "2", TrustState.TRUSTED),
        ("usr_guest", "1", TrustState.UNVERIFIED),
    }


async def test_nothing_answers_a_blocked_device(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, stranger = await a_new_phone(hass, emulator)
    await decide(agent, agent.installed.owner_id, "2", TrustState.BLOCKED)
    # Even a reply to its own request (an LLM tool or a script naming it) is refused.
    with pytest.raises(ServiceValidationError, match="sends nothing to a blocked device"):
        await hass.services.async_call(
            DOMAIN,
            "send_message",
            {"text": "the door code is 1234", "source_message_id": stranger},
            blocking=True,
        )
    assert await emulator.inbox(agent.conversation_id) == []


async def test_the_device_page_offers_trust_and_block(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, _ = await a_new_phone(hass, emulator)
    owner = agent.installed.owner_id
    agent_device = agent_device_of(hass, agent.entry.entry_id)
    found = await async_get_device_automations(hass, DeviceAutomationType.ACTION, [agent_device.id])
    ours = sorted(a["type"] for a in found[agent_device.id] if a["domain"] == DOMAIN)
    assert ours == ["block_device", "send_message", "trust_device"]

    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "triggers": [{"trigger": "event", "event_type": "test_trust_it"}],
                "actions": [
                    {
                        "domain": DOMAIN,
                        "device_id": agent_device.id,
                        "type": "trust_device",
                        "sender_device_id": "2",
                        "verification_code": shown(agent, owner, "2").code,
                    }
                ],
            }
        },
    )
    hass.bus.async_fire("test_trust_it")
    await wait_until(lambda: shown(agent, owner, "2").trusted)
