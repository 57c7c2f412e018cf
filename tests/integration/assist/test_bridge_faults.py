"""The Assist bridge under faults: a silent agent, an answer that cannot be sent, a bad
request, another entry's message (each sent as the agent's own signal would carry it:
forged bus events are tests/integration/test_events_attack_forged.py's). Each is logged and the
bridge keeps
answering."""

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_connect, async_dispatcher_send

from custom_components.pacerelle.client import TrustState
from custom_components.pacerelle.signals import Delivered, message_signal
from tests.helpers.assist import scripted
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until

APOLOGY = "Sorry, I could not answer that. The problem was logged in Home Assistant"


async def test_an_agent_with_no_spoken_answer_answers_with_an_apology(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed, runtime, agent = await scripted(hass, emulator, ["   ", "Here I am."])
    asked = await emulator.send(installed.conversation_id, text="are you there?")
    [reply] = await emulator.wait_inbox(installed.conversation_id, 1, within=20)
    assert (reply["text"], reply["reply_to_message_id"]) == (APOLOGY, asked)
    assert "gave no spoken answer" in caplog.text
    await wait_until(lambda: runtime.status.pending == 0)

    await emulator.send(installed.conversation_id, text="and now?")
    inbox = await emulator.wait_inbox(installed.conversation_id, 2, within=20)
    assert inbox[1]["text"] == "Here I am."
    assert agent.asked == ["are you there?", "and now?"]


async def test_faulty_requests_are_logged_and_the_bridge_goes_on(
    hass: HomeAssistant, emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture
) -> None:
    installed, runtime, agent = await scripted(
        hass, emulator, ["First answer.", "Lost answer.", "Second answer."]
    )
    seen: list[Delivered] = []
    async_dispatcher_connect(hass, message_signal(runtime.entry_id), seen.append)
    await emulator.send(installed.conversation_id, text="first")
    await emulator.wait_inbox(installed.conversation_id, 1, within=20)
    [real] = seen

    def send(entry_id: str = runtime.entry_id, **changes: Any) -> None:
        request = replace(real.request, **changes)
        async_dispatcher_send(hass, message_signal(entry_id), replace(real, request=request))

    # Another entry's message: not this bridge's to answer.
    send("another-entry", message_id="other-entry-message")
    # A request time that cannot be read: the bridge logs it and carries on.
    send(message_id="unreadable-time", received_at="not a time")
    # Requests the agent no longer knows (already forgotten): the answers cannot be sent.
    send(message_id="forgotten-trusted", text="forgotten")
    send(message_id="forgotten-untrusted", trust_state=TrustState.UNVERIFIED)
    await hass.async_block_till_done()
    await wait_until(lambda: "forgotten-untrusted" in caplog.text)

    assert "Assist bridge failed on request unreadable-time" in caplog.text
    assert "Assist bridge could not answer request forgotten-trusted" in caplog.text
    assert "Assist bridge could not answer request forgotten-untrusted" in caplog.text
    assert "other-entry-message" not in caplog.text

    await emulator.send(installed.conversation_id, text="second")
    inbox = await emulator.wait_inbox(installed.conversation_id, 2, within=20)
    assert [item["text"] for item in inbox] == ["First answer.", "Second answer."]
    # Only the real requests and the forgotten trusted one reached the conversation agent.
    assert agent.asked == ["first", "forgotten", "second"]
    await asyncio.sleep(0.2)
    assert len(await emulator.inbox(installed.conversation_id)) == 2
