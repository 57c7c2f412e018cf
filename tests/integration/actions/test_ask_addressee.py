"""`pacerelle.ask` counts only the answer of the person asked, in its conversation (issue 12
item 6): another user or another conversation answering leaves the question open."""

import asyncio
import base64
import json

from homeassistant.core import HomeAssistant

from tests.helpers.agent import Agent, start_agent
from tests.helpers.ask import ask_script, run_script, widget_on_device
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held


async def forged_answer(
    emulator: EmulatorHandle,
    agent: Agent,
    widget_id: str,
    *,
    sender: str,
    device: str,
    conversation_id: str,
    message_id: str,
) -> None:
    """A real Signal-encrypted "yes" from `sender`'s `device`, routed as the relay chooses."""
    plaintext = {"type": "widget.response", "id": message_id, "ref": widget_id, "value": True}
    sealed = emulator.emulator.humans.device(sender, device).encrypt_for(
        emulator.emulator, agent.installed.agent_id, json.dumps(plaintext).encode()
    )
    frame = {
        "type": "MSG",
        "id": message_id,
        "conversation_id": conversation_id,
        "from": sender,
        "from_device_id": device,
        "to": agent.installed.agent_id,
        "payload_b64": base64.b64encode(sealed).decode(),
        "encrypted": True,
    }
    await emulator.faults(inject_frames=[json.dumps(frame)])
    await held(agent.runtime, message_id)


async def test_only_the_person_asked_in_its_conversation_answers(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    owner = agent.installed.owner_id
    await ask_script(hass, {"kind": "confirm", "title": "Unlock the front door?", "timeout": 30})
    script = run_script(hass)
    question = await widget_on_device(emulator, agent, 1)

    # Another user in the same conversation says yes.
    await forged_answer(
        emulator,
        agent,
        question["id"],
        sender="usr_guest",
        device="1",
        conversation_id=agent.conversation_id,
        message_id="guest-yes",
    )
    # The owner's own identity, but in another conversation.
    await forged_answer(
        emulator,
        agent,
        question["id"],
        sender=owner,
        device="3",
        conversation_id="conv_elsewhere",
        message_id="elsewhere-yes",
    )
    await asyncio.sleep(0.2)
    assert not script.done()

    # The owner, in the conversation asked, answers: that one counts.
    answer_id = await emulator.send(
        agent.conversation_id, widget_response={"ref": question["id"], "value": False}
    )
    result = await asyncio.wait_for(script, 10)
    assert (result["status"], result["value"]) == ("answered", False)
    assert (result["answer_message_id"], result["sender_id"]) == (answer_id, owner)
    # The refused answers stay pending for automations; nothing consumed them.
    pending = {request.message_id for request in agent.runtime.agent.pending_requests()}
    assert {"guest-yes", "elsewhere-yes"} <= pending
