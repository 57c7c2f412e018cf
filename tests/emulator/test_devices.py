"""The emulator's devices of a person: a second device with the same or a new identity key,
and the verification codes the chat page shows."""

import base64
from pathlib import Path

import pytest

from custom_components.pacerelle.client.signal.identity import verification_code
from custom_components.pacerelle.client.signal.wire.frame import parse_frame
from custom_components.pacerelle.client.signal.wire.messages import PreKeySignalMessage
from tests.emulator.config import EmulatorConfig
from tests.emulator.reference_agent import ReferenceAgent
from tests.helpers.emulator import AdminError, EmulatorHandle, running_emulator


async def _receive_identity(agent: ReferenceAgent) -> tuple[str, bytes]:
    """The next message's text (decrypted by the agent) and the identity key it carried."""
    envelope = await agent.frame()
    message = parse_frame(base64.b64decode(envelope["payload_b64"]))
    assert isinstance(message, PreKeySignalMessage)
    text = agent.open(envelope)
    await agent.ack(envelope)
    return text, message.identity_key


async def test_second_device_with_the_same_or_a_new_identity_key(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install(user_id="usr_alice")
    agent = await emulator.agent(installed)
    try:
        await agent.connect()
        devices = f"/users/{installed.owner_id}/devices"
        first = await emulator.admin("POST", devices, {"device_id": "1"})
        same = await emulator.admin("POST", devices, {"device_id": 2, "same_identity_as": "1"})
        other = await emulator.admin("POST", devices, {"device_id": "3"})

        assert same["identity_key"] == first["identity_key"]
        assert other["identity_key"] != first["identity_key"]
        for device in (first, same, other):
            key = base64.b64decode(device["identity_key"])
            # The emulator's code (written from PROTOCOL.md) is the integration's.
            assert device["verification_code"] == verification_code(key)

        # Each device starts its own session; the agent sees the key the API announced.
        for device in (first, same, other):
            text = f"from {device['device_id']}"
            await emulator.send(installed.conversation_id, text=text, device_id=device["device_id"])
            received, identity = await _receive_identity(agent)
            assert received == text
            assert base64.b64encode(identity).decode() == device["identity_key"]

        # The shared identity survives further messages in both directions on device 2.
        await emulator.send(installed.conversation_id, text="again", device_id="2")
        envelope = await agent.frame()
        assert agent.open(envelope) == "again"
        await agent.reply(envelope, "to device 2")
        inbox = await emulator.wait_inbox(installed.conversation_id, 1)
        assert inbox[-1]["device_id"] == "2"
        assert inbox[-1]["text"] == "to device 2"

        listed = await emulator.admin("GET", devices)
        assert [item["device_id"] for item in listed] == ["1", "2", "3"]
        timeline = await emulator.admin(
            "GET", f"/conversations/{installed.conversation_id}/timeline"
        )
        assert timeline["devices"] == listed
        status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
        agent_code = verification_code(base64.b64decode(status["identity_key"]))
        assert status["verification_code"] == timeline["agent_verification_code"] == agent_code
    finally:
        await agent.close()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"device_id": "1"}, 409),
        ({"device_id": "5", "same_identity_as": "9"}, 404),
        ({"device_id": "0"}, 400),
        ({"device_id": "128"}, 400),
        ({"device_id": "web"}, 400),
        ({"device_id": True}, 400),
        ({}, 400),
        ({"device_id": "5", "same_identity_as": "x"}, 400),
    ],
)
async def test_device_refusals(
    emulator: EmulatorHandle, body: dict[str, object], status: int
) -> None:
    await emulator.admin("POST", "/users/usr_bob/devices", {"device_id": "1"})
    with pytest.raises(AdminError) as caught:
        await emulator.admin("POST", "/users/usr_bob/devices", body)
    assert caught.value.status == status


async def test_devices_and_their_keys_survive_a_restart(
    tmp_path: Path, socket_enabled: None
) -> None:
    config = EmulatorConfig(state_file=tmp_path / "state.json")
    async with running_emulator(config) as handle:
        await handle.admin("POST", "/users/usr_c/devices", {"device_id": "1"})
        await handle.admin(
            "POST", "/users/usr_c/devices", {"device_id": "2", "same_identity_as": 1}
        )
        before = await handle.admin("GET", "/users/usr_c/devices")
    async with running_emulator(config) as handle:
        assert await handle.admin("GET", "/users/usr_c/devices") == before
