"""One incoming text and one send cross from the client into Home Assistant at most three times.

The agent runs whole (coordinator.py's hooks, the client, the emulator's relay over TCP, a
person's device encrypting with Signal); the hooks coordinator.py builds are wrapped so that
every call the client makes into them is recorded, in order, then passed on unchanged.
`run_blocking` is Home Assistant's executor lent to the client (a thread, nothing told):
recorded apart. Everything else is the client telling the host something: a crossing.
"""

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client import AgentHooks
from custom_components.pacerelle.coordinator import AgentCoordinator
from custom_components.pacerelle.events import MessageEvents
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, event_of, received

EXECUTOR = "run_blocking"


class Crossings:
    """Every call into the host's hooks, as (hook name, arguments), in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.recording = False

    def wrap(self, hooks: AgentHooks) -> AgentHooks:
        def recorded(name: str, hook: Callable[..., Any]) -> Callable[..., Any]:
            def call_through(*args: Any) -> Any:
                if self.recording:
                    self.calls.append((name, args))
                return hook(*args)

            return call_through

        return replace(
            hooks, **{f.name: recorded(f.name, getattr(hooks, f.name)) for f in fields(hooks)}
        )

    def start(self) -> None:
        self.calls.clear()
        self.recording = True

    def told(self) -> list[str]:
        """The crossings so far: every hook called but the executor."""
        return [name for name, _ in self.calls if name != EXECUTOR]

    def executor_jobs(self) -> int:
        return sum(1 for name, _ in self.calls if name == EXECUTOR)


@pytest.fixture
def crossings(monkeypatch: pytest.MonkeyPatch) -> Crossings:
    recorder = Crossings()
    built = AgentCoordinator._hooks

    def hooks(coordinator: AgentCoordinator, events: MessageEvents) -> AgentHooks:
        return recorder.wrap(built(coordinator, events))

    monkeypatch.setattr(AgentCoordinator, "_hooks", hooks)
    return recorder


async def _settled(hass: HomeAssistant, emulator: EmulatorHandle, agent_id: str) -> None:
    """Nothing left for the agent: the relay holds nothing unacknowledged, HA is idle."""
    await emulator.wait_agent(agent_id, lambda status: status["queued"] == [])
    await hass.async_block_till_done()


async def test_one_incoming_text_crosses_three_times(
    hass: HomeAssistant, emulator: EmulatorHandle, crossings: Crossings
) -> None:
    """Its decryption outcome (issues/decrypt.py), its hand-over (the event) and the status
    (entities); whether it has anything to prepare is the client's to know (no files)."""
    agent = await start_agent(hass, emulator, spoken=True)  # the session is set up
    await _settled(hass, emulator, agent.installed.agent_id)
    crossings.start()
    message_id = await emulator.send(agent.conversation_id, text="lights on")
    await event_of(agent, message_id)
    await wait_until(lambda: "status_changed" in crossings.told())
    await _settled(hass, emulator, agent.installed.agent_id)

    assert crossings.told() == ["decryption", "deliver", "status_changed"], crossings.calls
    (decryption,) = (args for name, args in crossings.calls if name == "decryption")
    assert decryption[0].device.sender_id == agent.installed.owner_id
    (deliver,) = (args for name, args in crossings.calls if name == "deliver")
    assert (deliver[0].message_id, deliver[0].text) == (message_id, "lights on")
    assert crossings.executor_jobs() >= 1  # the batch's decryption at least


async def test_one_send_crosses_once_back(
    hass: HomeAssistant, emulator: EmulatorHandle, crossings: Crossings
) -> None:
    """The action calls into the client (one crossing); the client tells the send's status
    once (`sent`) and returns its reply: nothing else crosses."""
    agent = await start_agent(hass, emulator, spoken=True)
    await _settled(hass, emulator, agent.installed.agent_id)
    crossings.start()
    result = await call(hass, "send_message", {"text": "Done."})
    (delivered,) = await received(emulator, agent, 1)
    assert delivered["message_id"] == result["message_id"]
    await hass.async_block_till_done()

    assert crossings.told() == ["send_status"], crossings.calls
    (status,) = (args for name, args in crossings.calls if name == "send_status")
    assert status == (result["message_id"], agent.conversation_id, "sent")
    assert crossings.executor_jobs() >= 1  # the seal
