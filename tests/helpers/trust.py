"""The owner's phones as the trust tests meet them, and the owner's decisions on them."""

import base64
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from custom_components.pacerelle.client.values.trust_book import DeviceTrust, TrustBook, TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held


def shown(agent: Agent, person_id: str, device_id: str) -> DeviceTrust:
    """What the agent's trust book holds for the device (its state, key and code)."""
    device = agent.runtime.trust.book.get(person_id, device_id)
    assert device is not None, f"no device {device_id} of {person_id} in the trust book"
    return device


async def decide(agent: Agent, person_id: str, device_id: str, state: TrustState) -> None:
    """The owner decides for the key the device presents now, as the repair flow does."""
    key = shown(agent, person_id, device_id).identity_key
    await agent.runtime.trust.async_decide(person_id, device_id, state, key=key)


async def a_new_phone(
    hass: HomeAssistant, emulator: EmulatorHandle, **start: Any
) -> tuple[Agent, str]:
    """The owner's first phone wrote (trusted on first use), then a new device 2, which is
    held unverified; (the agent, started with `start`, and device 2's message id)."""
    agent = await start_agent(hass, emulator, spoken=True, **start)
    message_id = await emulator.send(agent.conversation_id, text="new phone", device_id="2")
    await held(agent.runtime, message_id)
    return agent, message_id


async def forged_text(
    emulator: EmulatorHandle,
    installed: Any,
    sender: str,
    text: str,
    *,
    conversation_id: str | None = None,
) -> str:
    """A real Signal message from another person's phone 1, injected as the relay would route
    it, in the owner's conversation or `conversation_id`; its message id."""
    sealed = emulator.emulator.humans.device(sender, "1").encrypt_for(
        emulator.emulator, installed.agent_id, text.encode()
    )
    frame = {
        "type": "MSG",
        "id": f"{sender}-1",
        "conversation_id": conversation_id or installed.conversation_id,
        "from": sender,
        "from_device_id": "1",
        "to": installed.agent_id,
        "payload_b64": base64.b64encode(sealed).decode(),
        "encrypted": True,
    }
    await emulator.faults(inject_frames=[json.dumps(frame)])
    return f"{sender}-1"


def trust_file(agent: Agent) -> str:
    """The Home Assistant store (`.storage/<key>`; the test harness keeps it in
    `hass_storage`) where earlier versions kept the agent's trust book, beside its store."""
    return f"{DOMAIN}.trust.{agent.entry.entry_id}"


async def put_trust_file(hass: HomeAssistant, agent: Agent, book: TrustBook) -> None:
    """The trust file as earlier versions wrote it (Home Assistant's Store, TrustBook.to_json)."""
    devices = book.to_json()["devices"]  # their format had no "first_use"
    await Store(hass, 1, trust_file(agent), private=True).async_save({"devices": devices})


async def stopped_as_before_the_move(
    hass: HomeAssistant, agent: Agent, *, judged: bool = True
) -> None:
    """Unload the entry and leave its store as a version that kept the book outside left it:
    no book inside. `judged=False`: as a version before trust existed (no request judged)."""
    assert await hass.config_entries.async_unload(agent.entry.entry_id)
    store = agent_store(hass, agent.installed.agent_id)
    document = await store.load()
    document.pop("trust")
    if not judged:
        inbox, history = document["inbox"], document["history"]
        requests = [
            *(item["request"] for item in inbox["received"]),
            *inbox["pending"],
            *(item["request"] for item in history["requests"]),
        ]
        for request in requests:
            request.pop("trust_device_id", None)
            request.pop("trust_state", None)
    await store.save(document)
    await store.close()


def book_states(agent: Agent) -> set[tuple[str, str, TrustState]]:
    book = agent.runtime.trust.book
    return {(d.person_id, d.device_id, d.state) for d in book.devices.values()}
